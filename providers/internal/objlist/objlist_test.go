package objlist_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3://

	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/internal/objlist"
)

// lake writes 3 objects in each of 8 partition directories (and one at
// the root) directly, and opens the prefix through a fault proxy.
func lake(t *testing.T) (testenv.S3Env, *testenv.FaultProxy, iceio.IO, []string) {
	t.Helper()
	ctx := context.Background()
	env := testenv.S3(t)
	direct, err := iceio.LoadFS(ctx, env.Properties(), env.URL())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{env.URL("version-hint.text")}
	for d := range 8 {
		for i := range 3 {
			want = append(want, env.URL("data", fmt.Sprintf("day=%d", d), fmt.Sprintf("f%d.parquet", i)))
		}
	}
	for _, p := range want {
		if err := direct.(iceio.WriteFileIO).WriteFile(p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	proxy := testenv.StartFaultProxy(t, env.Endpoint)
	fsys, err := iceio.LoadFS(ctx, env.Through(proxy).Properties(), env.URL())
	if err != nil {
		t.Fatal(err)
	}
	return env, proxy, fsys, want
}

func list(t *testing.T, fsys iceio.IO, root string) ([]string, error) {
	var got []string
	ok, err := objlist.List(context.Background(), fsys, root, objlist.Settings{Concurrency: 3}, func(o objlist.Object) error {
		if o.Size != 1 || o.ModTime.IsZero() {
			t.Errorf("%s: size %d, time %v", o.Loc, o.Size, o.ModTime)
		}
		got = append(got, o.Loc)
		return nil
	})
	if !ok {
		t.Fatal("an S3 IO was not listed")
	}
	slices.Sort(got)
	return got, err
}

// TestListFansOutAndRetries: every object once, through more than one
// listing request; a page throttled twice (503 SlowDown) is retried.
func TestListFansOutAndRetries(t *testing.T) {
	env, proxy, fsys, want := lake(t)
	proxy.Add(testenv.Fault{Method: http.MethodGet, Query: "list-type", Nth: 4, Times: 2, Status: http.StatusServiceUnavailable, Code: "SlowDown"})
	got, err := list(t, fsys, env.URL())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("listed %v\nwant %v", got, want)
	}
	if n := len(proxy.Requests(http.MethodGet, "")); n < 10 || proxy.Faulted() != 2 {
		t.Errorf("%d listing requests, %d faulted: want one per directory and level, 2 faulted", n, proxy.Faulted())
	}
}

// TestListFailsOnPage7: the seventh listing request fails every time it
// is tried. The listing is an error naming the page, never a shorter
// listing.
func TestListFailsOnPage7(t *testing.T) {
	env, proxy, fsys, _ := lake(t)
	proxy.Add(testenv.Fault{Method: http.MethodGet, Query: "list-type", Nth: 7, Times: 100, Status: http.StatusInternalServerError, Code: "InternalError"})
	got, err := list(t, fsys, env.URL())
	if err == nil || !strings.Contains(err.Error(), "page 1") || !strings.Contains(err.Error(), "InternalError") {
		t.Fatalf("listing with a failing page: %d objects, err %v", len(got), err)
	}
}
