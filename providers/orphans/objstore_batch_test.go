package orphans_test

// Issue 30 on the real S3 server: the sweep deletes through S3
// DeleteObjects in batches, with faults injected by testenv.FaultProxy:
// throttling, a batch that fails halfway, a listing that fails on page 7.
// Every test reads the bucket afterwards directly, not through the proxy.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/iceops/iceops/apply"
	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/internal/testenv"
	"github.com/iceops/iceops/providers"
)

// deleting turns the lake's sweep from quarantine into deletion and sets
// the catalog's iceops.delete-* properties.
func (l *s3Lake) deleting(props map[string]string) {
	l.t.Helper()
	path := filepath.Join(l.dir, "main.iceops.hcl")
	b, err := os.ReadFile(path)
	must(l.t, err)
	hcl := strings.Replace(string(b), "    quarantine = \"7d\"\n", "", 1)
	var extra string
	for k, v := range props {
		extra += fmt.Sprintf("    %q = %q\n", k, v)
	}
	hcl = strings.Replace(hcl, "  properties = {\n", "  properties = {\n"+extra, 1)
	must(l.t, os.WriteFile(path, []byte(hcl), 0o644))
	cfg, diags := config.Load(l.dir, config.LoadOptions{})
	if diags.HasErrors() {
		l.t.Fatal(diags.Error())
	}
	l.cfg = cfg
}

// TestS3SweepBatchFailsHalfway: 25 orphans in batches of 10. The first
// DeleteObjects is throttled twice (503 SlowDown, retried by the SDK); the
// second is answered 200 with AccessDenied for every other key. The
// apply fails the action (exit code 1), names each of those five files as
// still in place, deletes the 20 others with three DeleteObjects and no
// single DELETE, and nothing but the planned strays leaves the bucket.
func TestS3SweepBatchFailsHalfway(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.deleting(map[string]string{providers.DeleteBatchSizeProperty: "10", providers.DeleteConcurrencyProperty: "1"})
	strays := l.strays("orders", 25)
	before := l.objects("orders")
	sess := l.session()
	p := l.plan(ctx, sess)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors %+v", p.Errors)
	}
	if o := orphansOf(planOf(t, p, "lake.sales.orders")); o == nil || len(o.Paths) != 25 {
		t.Fatalf("plan: %+v", o)
	}
	l.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Nth: 1, Times: 2, Status: http.StatusServiceUnavailable, Code: "SlowDown"})
	var refused []string
	l.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Nth: 2, Answer: testenv.DeleteObjectsFailing(t, l.env.Bucket, l.direct.Remove, func(i int, key string) bool {
		if i%2 == 1 {
			refused = append(refused, "s3://"+l.env.Bucket+"/"+key)
			return true
		}
		return false
	}, "AccessDenied")})
	res := l.apply(ctx, sess, p)
	ar := actionResult(t, res, "lake.sales.orders")
	if !res.Failed() || ar.Status != apply.StatusFailed || ar.FilesDeleted != 20 || len(ar.DeleteErrors) != 5 || len(refused) != 5 {
		t.Fatalf("apply: failed=%v %+v (refused %v)", res.Failed(), ar, refused)
	}
	j := resultsJSON(t, res)
	for _, r := range refused {
		if !strings.Contains(j, r+": not deleted, still in place: ") || !strings.Contains(j, "AccessDenied") {
			t.Errorf("apply -json does not name %s as still in place: %s", r, j)
		}
	}
	if batches, singles := l.proxy.DeleteRequests(); batches != 3+2 || singles != 0 {
		t.Errorf("%d DeleteObjects (2 throttled) and %d DELETE requests, want 5 and 0", batches, singles)
	}
	after := l.objects("orders")
	for rel := range before {
		loc := l.url("warehouse", "orders", rel)
		_, kept := after[rel]
		want := !slices.Contains(strays, loc) || slices.Contains(refused, loc)
		if kept != want {
			t.Errorf("%s: kept %v, want %v", rel, kept, want)
		}
	}
	for rel := range after {
		// The policy's property change commits a metadata file.
		if _, ok := before[rel]; !ok && !(strings.HasPrefix(rel, "metadata/") && strings.HasSuffix(rel, ".metadata.json")) {
			t.Errorf("%s appeared", rel)
		}
	}
}

// TestS3SweepListingFailsOnPage7: the seventh listing request of the plan
// fails however often it is retried. The plan proposes no deletion for the
// table (an error or a refusal), and an apply of it changes nothing.
func TestS3SweepListingFailsOnPage7(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.deleting(nil)
	for i := range 24 { // eight partition directories: eleven listing requests
		must(t, l.direct.(iceio.WriteFileIO).WriteFile(l.url("warehouse", "orders", "data", fmt.Sprintf("day=%d", i%8), fmt.Sprintf("stray-%d.parquet", i)), []byte("stray")))
	}
	before := l.objects("orders")
	l.proxy.Add(testenv.Fault{Method: http.MethodGet, Query: "list-type", Nth: 7, Times: 100, Status: http.StatusInternalServerError, Code: "InternalError"})
	sess := l.session()
	p := l.plan(ctx, sess)
	for _, tp := range p.Tables {
		if o := orphansOf(tp); o != nil {
			t.Fatalf("a plan on a failed listing proposes deleting %v", o.Paths)
		}
	}
	if len(p.Errors) == 0 && (len(p.Tables) != 1 || len(p.Tables[0].Refusals) == 0) {
		t.Fatalf("a failed listing is neither an error nor a refusal: %+v", p)
	}
	if l.proxy.Faulted() == 0 {
		t.Fatal("no listing failed")
	}
	if res := l.apply(ctx, sess, p); !res.Failed() {
		t.Fatalf("apply of a plan with an error succeeded: %+v", res.Summary)
	}
	if batches, singles := l.proxy.DeleteRequests(); batches+singles != 0 {
		t.Errorf("%d DeleteObjects and %d DELETE requests after a failed listing", batches, singles)
	}
	if got := l.objects("orders"); !mapsEqualS(dataOnly(got), dataOnly(before)) {
		t.Fatalf("bucket changed: %v", keys(got))
	}
}

// TestS3QuarantineCopiesServerSide: a quarantine on S3 copies each file
// with one CopyObject, no byte of it passing through iceops (then deletes
// the original); all five are quarantined.
func TestS3QuarantineCopiesServerSide(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.strays("orders", 5)
	sess := l.session()
	p := l.plan(ctx, sess)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors %+v", p.Errors)
	}
	res := l.apply(ctx, sess, p)
	if ar := actionResult(t, res, "lake.sales.orders"); res.Failed() || ar.FilesQuarantined != 5 {
		t.Fatalf("apply: failed=%v %+v", res.Failed(), ar)
	}
	var copies, puts int
	for _, r := range l.proxy.Requests(http.MethodPut, "/orders/.iceops-quarantine/") {
		switch {
		case strings.Contains(r.Query, "CopyObject"):
			copies++
		case strings.Contains(r.Path, "/data/stray-"):
			puts++
		}
	}
	if copies != 5 || puts != 0 {
		t.Errorf("%d CopyObject and %d uploads into the quarantine, want 5 and 0", copies, puts)
	}
}
