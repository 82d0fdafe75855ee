package orphans_test

// Issue 30 on the real S3 server: the sweep deletes through S3
// DeleteObjects in batches, with faults injected by testenv.FaultProxy:
// throttling, a batch that fails halfway, a listing that fails on page 7.
// Every test reads the bucket afterwards directly, not through the proxy.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/orphans"
	"github.com/icewright/icewright/providers/testkit"
)

// deleting turns the lake's sweep from quarantine into deletion and sets
// the catalog's icewright.delete-* properties.
func (l *s3Lake) deleting(props map[string]string) {
	l.t.Helper()
	l.configure(props, false)
}

// configure sets the catalog's properties props and keeps the sweep's
// quarantine or turns it into deletion.
func (l *s3Lake) configure(props map[string]string, quarantine bool) {
	l.t.Helper()
	path := filepath.Join(l.dir, "main.icewright.hcl")
	b, err := os.ReadFile(path)
	must(l.t, err)
	hcl := string(b)
	if !quarantine {
		hcl = strings.Replace(hcl, "    quarantine = \"7d\"\n", "", 1)
	}
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
	refused := l.failEveryOtherKey(2, "AccessDenied")
	res := l.apply(ctx, sess, p)
	ar := actionResult(t, res, "lake.sales.orders")
	if !res.Failed() || ar.Status != apply.StatusFailed || ar.FilesDeleted != 20 || len(ar.DeleteErrors) != 5 || len(*refused) != 5 {
		t.Fatalf("apply: failed=%v %+v (refused %v)", res.Failed(), ar, *refused)
	}
	j := resultsJSON(t, res)
	for _, r := range *refused {
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
		want := !slices.Contains(strays, loc) || slices.Contains(*refused, loc)
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
// with one CopyObject, no byte of it passing through icewright (then deletes
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
	for _, r := range l.proxy.Requests(http.MethodPut, "/orders/.icewright-quarantine/") {
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

// failEveryOtherKey answers the nth DeleteObjects as a store failing part
// of a batch: every other key is reported failed with code and stays, the
// others are deleted. It returns the locations refused, filled when that
// request comes.
func (l *s3Lake) failEveryOtherKey(nth int, code string) *[]string {
	var refused []string
	l.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Nth: nth, Answer: testenv.DeleteObjectsFailing(l.t, l.env.Bucket, l.direct.Remove, func(i int, key string) bool {
		if i%2 == 1 {
			refused = append(refused, "s3://"+l.env.Bucket+"/"+key)
			return true
		}
		return false
	}, code)})
	return &refused
}

// restoreAll restores quarantine run of table name, which must put back
// want files and refuse none, and checks that the table's data objects are
// then exactly those of before.
func (l *s3Lake) restoreAll(ctx context.Context, sess *providers.Session, name, run string, want int, before map[string]string) {
	l.t.Helper()
	rr, err := sess.RestoreQuarantine(ctx, "lake.sales."+name, run)
	must(l.t, err)
	if len(rr.Restored) != want || len(rr.Refused) != 0 || rr.ManifestKept != "" {
		l.t.Fatalf("restore: %+v", rr)
	}
	if got := l.objects(name); !mapsEqualS(dataOnly(got), dataOnly(before)) {
		l.t.Fatalf("after restore the bucket differs:\n got %v\nwant %v", keys(got), keys(before))
	}
}

// quarantinePlaces says where each stray of table name is after a
// quarantine run: "quarantine", "place", "both" or "nowhere", read from
// the bucket directly.
func (l *s3Lake) quarantinePlaces(name string, strays []string) (map[string]string, string) {
	l.t.Helper()
	after := l.objects(name)
	run := runIDOf(l.t, after)
	root := l.url("warehouse", name) + "/"
	out := map[string]string{}
	for _, s := range strays {
		rel := strings.TrimPrefix(s, root)
		_, inPlace := after[rel]
		_, inRun := after[orphans.QuarantineDir+"/"+run+"/"+rel]
		out[s] = map[[2]bool]string{{true, false}: "place", {false, true}: "quarantine", {true, true}: "both", {false, false}: "nowhere"}[[2]bool{inPlace, inRun}]
	}
	return out, run
}

// TestS3QuarantineBatchFailsHalfway: 25 orphans quarantined in batches of
// 10. Each is copied server-side (one CopyObject each); the originals go
// in one DeleteObjects per batch (three) and no single DELETE. The second
// batch's DeleteObjects is answered 200 with AccessDenied for every other
// key: those five files are named as copied into the quarantine with the
// original still in place (files_in_both_places), the action fails, the
// other 20 are only in the run. Restore of the run then brings every file
// back, drops the five extra copies, and the table reads the same rows.
func TestS3QuarantineBatchFailsHalfway(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.configure(map[string]string{providers.DeleteBatchSizeProperty: "10", providers.DeleteConcurrencyProperty: "2"}, true)
	strays := l.strays("orders", 25)
	before := l.objects("orders")
	tbl, err := l.cat.LoadTable(ctx, table.Identifier{"sales", "orders"})
	must(t, err)
	rows := testkit.ScanIDs(t, tbl)
	sess := l.session()
	p := l.plan(ctx, sess)
	if o := orphansOf(planOf(t, p, "lake.sales.orders")); len(p.Errors) > 0 || o == nil || len(o.Paths) != 25 {
		t.Fatalf("plan: %+v %+v", p.Errors, o)
	}
	refused := l.failEveryOtherKey(2, "AccessDenied")
	res := l.apply(ctx, sess, p)
	ar := actionResult(t, res, "lake.sales.orders")
	if !res.Failed() || ar.Status != apply.StatusFailed || ar.FilesQuarantined != 20 || ar.FilesInBothPlaces != 5 || ar.FilesNotMoved != 0 || ar.FilesPlaceUnknown != 0 || len(ar.DeleteErrors) != 5 || len(*refused) != 5 {
		t.Fatalf("apply: failed=%v %+v (refused %v)", res.Failed(), ar, *refused)
	}
	j := resultsJSON(t, res)
	for _, r := range *refused {
		if !strings.Contains(j, r+": copied into the quarantine, original still in place: ") || !strings.Contains(j, "AccessDenied") {
			t.Errorf("apply -json does not name %s as in both places: %s", r, j)
		}
	}
	// The plan and the apply's re-check each probe the quarantine with a
	// write and a single DELETE; no original is deleted on its own.
	batches, _ := l.proxy.DeleteRequests()
	if singles := len(l.proxy.Requests(http.MethodDelete, "/orders/data/")); batches != 3 || singles != 0 {
		t.Errorf("%d DeleteObjects and %d DELETE requests of originals, want 3 and 0 (one batch delete per 10 originals)", batches, singles)
	}
	var copies int
	for _, r := range l.proxy.Requests(http.MethodPut, "/orders/"+orphans.QuarantineDir+"/") {
		if strings.Contains(r.Query, "CopyObject") {
			copies++
		}
	}
	if copies != 25 {
		t.Errorf("%d CopyObject, want 25", copies)
	}
	places, run := l.quarantinePlaces("orders", strays)
	for _, s := range strays {
		want := "quarantine"
		if slices.Contains(*refused, s) {
			want = "both"
		}
		if places[s] != want {
			t.Errorf("%s is in %s, want %s", s, places[s], want)
		}
	}
	var man orphans.QuarantineManifest
	must(t, json.Unmarshal([]byte(l.objects("orders")[orphans.QuarantineDir+"/"+run+"/"+orphans.QuarantineManifestName]), &man))
	if len(man.Files) != 25 {
		t.Fatalf("manifest lists %d files, want all 25 (20 moved, 5 copied): %+v", len(man.Files), man.Files)
	}

	l.proxy.Clear()
	l.restoreAll(ctx, sess, "orders", run, 25, before)
	tbl, err = l.cat.LoadTable(ctx, table.Identifier{"sales", "orders"})
	must(t, err)
	if got := testkit.ScanIDs(t, tbl); !maps.Equal(got, rows) {
		t.Fatalf("the table reads %d ids after restore, %d before", len(got), len(rows))
	}
}

// TestS3QuarantineDeleteAnswerLost: 5 orphans quarantined in batches of 2;
// from the second DeleteObjects on the server never answers (the request
// is held, as a paused server does). The first batch is moved; the second
// batch's files are in a place unknown (their delete may have landed),
// named so; the store is then judged unresponsive, so the last file is not
// even copied (still in place). After the server answers again, restore
// of the run brings every file back.
func TestS3QuarantineDeleteAnswerLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := newS3Lake(t, "orders")
	l.configure(map[string]string{providers.DeleteBatchSizeProperty: "2", providers.DeleteConcurrencyProperty: "1"}, true)
	strays := l.strays("orders", 5)
	before := l.objects("orders")
	sess := l.session()
	p := l.plan(ctx, sess)
	if o := orphansOf(planOf(t, p, "lake.sales.orders")); len(p.Errors) > 0 || o == nil || len(o.Paths) != 5 {
		t.Fatalf("plan: %+v %+v", p.Errors, o)
	}
	l.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Nth: 2, Times: 100, Stall: true})
	res, err := apply.Apply(ctx, l.cfg, sess, p, apply.ApplyOptions{Version: "test", Now: func() time.Time { return l.later }, MaxRetries: -1})
	must(t, err)
	ar := actionResult(t, res, "lake.sales.orders")
	if !res.Failed() || ar.FilesQuarantined != 2 || ar.FilesPlaceUnknown != 2 || ar.FilesNotMoved != 1 || ar.FilesInBothPlaces != 0 {
		t.Fatalf("apply: failed=%v %+v", res.Failed(), ar)
	}
	var unknown, notStarted int
	for _, e := range ar.DeleteErrors {
		switch {
		case strings.Contains(e, ": place unknown: copied into the quarantine; the delete of the original got no answer"):
			unknown++
		case strings.Contains(e, ": not quarantined, still in place: not started: "):
			notStarted++
		}
	}
	if unknown != 2 || notStarted != 1 {
		t.Errorf("%d unknown and %d not started named, want 2 and 1: %v", unknown, notStarted, ar.DeleteErrors)
	}
	l.proxy.Clear()
	l.proxy.Release()
	// The held requests were never forwarded: the second batch is in
	// both places, the first in the run, the last in place.
	places, run := l.quarantinePlaces("orders", strays)
	for i, want := range []string{"quarantine", "quarantine", "both", "both", "place"} {
		if places[strays[i]] != want {
			t.Errorf("%s is in %s, want %s", strays[i], places[strays[i]], want)
		}
	}
	l.restoreAll(ctx, sess, "orders", run, 4, before)
}

// TestS3QuarantineInterruptFinishesBatch: an interrupt while a batch's
// files are being copied lets that batch finish (the originals whose copy
// landed are still deleted, with one DeleteObjects, so none is left in two
// places), and no later batch starts: 4 files moved, 6 still in place,
// each named.
func TestS3QuarantineInterruptFinishesBatch(t *testing.T) {
	l := newS3Lake(t, "orders")
	strays := l.strays("orders", 10)
	tbl, err := l.cat.LoadTable(context.Background(), table.Identifier{"sales", "orders"})
	must(t, err)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	l.proxy.Add(testenv.Fault{Method: http.MethodPut, Query: "CopyObject", Nth: 2, Then: interrupt})
	res, err := orphans.Remove(ctx, l.cat, tbl, orphans.Spec{Paths: strays, OlderThan: 72 * time.Hour, Now: l.later,
		Quarantine: true, QuarantineFor: 7 * 24 * time.Hour, BatchSize: 4, DeleteConcurrency: 1})
	must(t, err)
	var notStarted int
	for _, e := range res.DeleteErrors {
		if strings.Contains(e, ": not quarantined, still in place: not started: context canceled") {
			notStarted++
		}
	}
	if res.FilesQuarantined != 4 || res.FilesNotMoved != 6 || res.FilesInBothPlaces != 0 || res.FilesPlaceUnknown != 0 || notStarted != 6 {
		t.Fatalf("interrupted quarantine: %+v", res)
	}
	if batches, _ := l.proxy.DeleteRequests(); batches != 1 {
		t.Errorf("%d DeleteObjects, want the interrupted batch's one", batches)
	}
	places, _ := l.quarantinePlaces("orders", strays)
	for i, s := range strays {
		want := "place"
		if i < 4 {
			want = "quarantine"
		}
		if places[s] != want {
			t.Errorf("%s is in %s, want %s", s, places[s], want)
		}
	}
}
