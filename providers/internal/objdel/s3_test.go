package objdel_test

// DeleteObjects on the real S3 server (the shared versitygw), behind
// testenv.FaultProxy, which counts the requests and injects the store's
// faults. Every test reads the bucket afterwards directly, not through the
// proxy.

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/internal/objdel"
)

type s3Bench struct {
	t      *testing.T
	env    testenv.S3Env
	proxy  *testenv.FaultProxy
	direct iceio.IO
	store  objdel.Store
}

func newS3Bench(t *testing.T) *s3Bench {
	t.Helper()
	ctx := context.Background()
	env := testenv.S3(t)
	proxy := testenv.StartFaultProxy(t, env.Endpoint)
	direct, err := iceio.LoadFS(ctx, env.Properties(), env.URL())
	if err != nil {
		t.Fatal(err)
	}
	st, err := objdel.Open(ctx, env.Through(proxy).Properties(), env.URL("x"))
	if err != nil {
		t.Fatal(err)
	}
	return &s3Bench{t: t, env: env, proxy: proxy, direct: direct, store: st}
}

// put writes n objects o-0000... and returns their locations.
func (b *s3Bench) put(n int) []string {
	b.t.Helper()
	locs := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make([]error, n)
	for i := range n {
		locs[i] = b.env.URL(fmt.Sprintf("o-%04d", i))
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = b.direct.(iceio.WriteFileIO).WriteFile(locs[i], []byte("x"))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.t.Fatal(err)
		}
	}
	return locs
}

// left lists the objects in the test's prefix, read directly.
func (b *s3Bench) left() []string {
	b.t.Helper()
	var out []string
	err := b.direct.(iceio.ListableIO).WalkDir(b.env.URL(), func(p string, d iofs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil && !errors.Is(err, iofs.ErrNotExist) { // an empty prefix
		b.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func (b *s3Bench) run(locs []string, set objdel.Settings) map[string]error {
	b.t.Helper()
	out := map[string]error{}
	err := objdel.Run(context.Background(), b.store, locs, set, objdel.Hooks{
		Done: func(i int, err error) { out[locs[i]] = err },
		Left: func(i int, err error) { b.t.Errorf("%s left: %v", locs[i], err) },
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// TestS3DeleteObjectsInBatches: 1,101 locations (one already absent) in
// batches of 500 cost three DeleteObjects requests and no single DELETE;
// the absent one counts as gone; exactly the unlisted objects remain.
func TestS3DeleteObjectsInBatches(t *testing.T) {
	b := newS3Bench(t)
	locs := b.put(1200)
	doomed := append(slices.Clone(locs[:1100]), b.env.URL("never-written"))
	for l, err := range b.run(doomed, objdel.Settings{BatchSize: 500}) {
		if err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	if got, want := b.left(), locs[1100:]; !slices.Equal(got, want) {
		t.Errorf("left %d objects, want the %d not listed", len(got), len(want))
	}
	if many, single := b.proxy.DeleteRequests(); many != 3 || single != 0 {
		t.Errorf("%d DeleteObjects and %d DELETE requests, want 3 and 0", many, single)
	}
}

// TestS3DeleteObjectsThrottled: the first two DeleteObjects answer 503
// SlowDown; the SDK's retryer backs off and sends again, and every object
// goes.
func TestS3DeleteObjectsThrottled(t *testing.T) {
	b := newS3Bench(t)
	locs := b.put(30)
	b.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Nth: 1, Times: 2, Status: http.StatusServiceUnavailable, Code: "SlowDown"})
	for l, err := range b.run(locs, objdel.Settings{}) {
		if err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	if left := b.left(); len(left) != 0 {
		t.Errorf("left %v", left)
	}
	if many, _ := b.proxy.DeleteRequests(); many != 3 || b.proxy.Faulted() != 2 {
		t.Errorf("%d DeleteObjects (%d throttled), want 3 (2)", many, b.proxy.Faulted())
	}
}

// halfFails answers a DeleteObjects in place of the server: it deletes
// the keys at even positions for real (directly) and reports the others
// failed with code.
func (b *s3Bench) halfFails(code string) func(w http.ResponseWriter, r *http.Request) {
	return testenv.DeleteObjectsFailing(b.t, b.env.Bucket, b.direct.Remove, func(i int, _ string) bool { return i%2 == 1 }, code)
}

// TestS3DeleteObjectsFailsHalfway: a DeleteObjects answered 200 with
// AccessDenied for every other key. Each such key has its own error, its
// object is still there, the others are gone, and the run goes on to the
// next batch.
func TestS3DeleteObjectsFailsHalfway(t *testing.T) {
	b := newS3Bench(t)
	locs := b.put(20)
	b.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Nth: 1, Answer: b.halfFails("AccessDenied")})
	out := b.run(locs, objdel.Settings{BatchSize: 10, Concurrency: 1})
	var failed []string
	for l, err := range out {
		if err != nil {
			if !strings.Contains(err.Error(), "AccessDenied") {
				t.Errorf("%s: %v", l, err)
			}
			failed = append(failed, l)
		}
	}
	slices.Sort(failed)
	want := []string{locs[1], locs[3], locs[5], locs[7], locs[9]}
	if !slices.Equal(failed, want) {
		t.Errorf("failed %v, want %v", failed, want)
	}
	if left := b.left(); !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// TestS3DeleteObjectsKeyBusy: per-key SlowDown in a 200 answer: those keys
// are sent again (the SDK retries whole requests only), and all go.
func TestS3DeleteObjectsKeyBusy(t *testing.T) {
	b := newS3Bench(t)
	locs := b.put(10)
	b.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Nth: 1, Answer: b.halfFails("SlowDown")})
	for l, err := range b.run(locs, objdel.Settings{}) {
		if err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
	if left := b.left(); len(left) != 0 {
		t.Errorf("left %v", left)
	}
	if many, _ := b.proxy.DeleteRequests(); many != 2 {
		t.Errorf("%d DeleteObjects, want 2", many)
	}
}
