package orphans_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// TestS3Actuals (issue 45, item 4): on the real S3 server, apply counts
// each action's requests at the HTTP client, and the counts match what the
// test knows happened and what the fault proxy in front of the server saw:
// 25 orphans deleted in ceil(25/10) DeleteObjects and no DELETE; the
// expiry's files in batches of 10; a compaction of k files reading those
// k data files; and, over the apply, as many PUT, LIST, DELETE and batch
// requests as the proxy saw (everything that writes, lists or deletes
// happens inside an action; only table loads between actions read); the
// expiry's and the sweep's estimates name the same requests, files read
// and deleted.
func TestS3Actuals(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.deleting(map[string]string{providers.DeleteBatchSizeProperty: "10", providers.DeleteConcurrencyProperty: "1"})
	// Compaction and retention besides the sweep.
	path := filepath.Join(l.dir, "main.icewright.hcl")
	b, err := os.ReadFile(path)
	must(t, err)
	hcl := strings.Replace(string(b), "  orphan_files {\n", `  target_file_size = "64MiB"
  compaction {
    min_input_files = 2
  }
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = 1
  }
  orphan_files {
`, 1)
	must(t, os.WriteFile(path, []byte(hcl), 0o644))
	l.configure(nil, false)
	tbl, err := l.cat.LoadTable(ctx, table.Identifier{"sales", "orders"})
	must(t, err)
	testkit.Append(t, tbl, 4, 10, 1)
	const strays = 25
	l.strays("orders", strays)

	sess := l.session()
	p := l.plan(ctx, sess)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors %+v", p.Errors)
	}
	tp := planOf(t, p, "lake.sales.orders")
	var compact *diff.CompactAction
	for _, a := range tp.Actions {
		if a.Type == diff.Compact {
			compact = a.Compact
		}
	}
	if compact == nil || orphansOf(tp) == nil || len(orphansOf(tp).Paths) != strays {
		t.Fatalf("plan: %+v", tp.Actions)
	}
	seenBefore := len(l.proxy.Requests("", ""))
	res := l.apply(ctx, sess, p)
	if res.Failed() {
		t.Fatalf("apply failed: %+v", res.Tables)
	}

	var sum diff.Requests
	for _, tr := range res.Tables {
		for _, a := range tr.Actions {
			u := a.Actual
			if u == nil {
				t.Fatalf("%s: no actual", a.Type)
			}
			t.Logf("%s: actual %+v", a.Type, *u)
			if a.Estimate != nil {
				t.Logf("%s: estimate %+v", a.Type, *a.Estimate)
			}
			sum.Add(u.Requests)
			if a.Type == diff.RemoveOrphanFiles || a.Type == diff.ExpireSnapshots {
				// Estimated as the executor reads, lists and deletes
				// (diff/estimate.go, expireUsage and estimateOrphansWith):
				// every request kind, each object read once, each file
				// deleted, exactly.
				e := a.Estimate
				if e == nil || e.Requests != u.Requests || e.FilesRead != u.FilesRead || e.FilesDeleted != u.FilesDeleted || e.BytesFreed != u.BytesFreed {
					t.Errorf("%s: estimate %+v, actual %+v", a.Type, e, *u)
				}
			}
			switch a.Type {
			case diff.RemoveOrphanFiles:
				if u.FilesDeleted != strays || u.Requests.BatchDelete != (strays+9)/10 || u.Requests.Delete != 0 || u.Requests.List == 0 {
					t.Errorf("orphans: %d strays in batches of 10: actual %+v", strays, *u)
				}
			case diff.ExpireSnapshots:
				if u.FilesDeleted == 0 || u.FilesDeleted != a.FilesDeleted || u.Requests.BatchDelete != (u.FilesDeleted+9)/10 || u.Requests.Delete != 0 {
					t.Errorf("expiry deleted %d files: actual %+v", a.FilesDeleted, *u)
				}
			case diff.Compact:
				k := int64(compact.InputFiles)
				if u.FilesRead < k || u.Requests.Get < k || u.BytesRead < compact.InputBytes-4*k {
					t.Errorf("compaction of %d files (%d bytes): actual %+v", k, compact.InputBytes, *u)
				}
				if u.FilesWritten < a.FilesAfter+3 || u.BytesWritten < a.BytesAfter || u.Requests.Put < u.FilesWritten {
					t.Errorf("compaction into %d files (%d bytes): actual %+v", a.FilesAfter, a.BytesAfter, *u)
				}
			}
		}
	}

	var proxy diff.Requests
	dataRead := map[string]bool{}
	for _, s := range l.proxy.Requests("", "")[seenBefore:] {
		switch {
		case s.Method == http.MethodGet && (strings.Contains(s.Query, "list-type") || strings.Contains(s.Query, "uploads")):
			proxy.List++
		case s.Method == http.MethodGet:
			proxy.Get++
			if strings.Contains(s.Path, "/data/") && !strings.Contains(s.Path, "stray-") {
				dataRead[s.Path] = true
			}
		case s.Method == http.MethodHead:
			proxy.Head++
		case s.Method == http.MethodPut, s.Method == http.MethodPost && !strings.Contains(s.Query, "delete"):
			proxy.Put++
		case s.Method == http.MethodPost:
			proxy.BatchDelete++
		case s.Method == http.MethodDelete:
			proxy.Delete++
		}
	}
	t.Logf("proxy saw %+v; actions counted %+v", proxy, sum)
	if sum.Put != proxy.Put || sum.List != proxy.List || sum.Delete != proxy.Delete || sum.BatchDelete != proxy.BatchDelete {
		t.Errorf("actions counted %+v, the proxy saw %+v", sum, proxy)
	}
	if sum.Get > proxy.Get || sum.Head > proxy.Head {
		t.Errorf("actions counted more reads (%+v) than the proxy saw (%+v)", sum, proxy)
	}
	if len(dataRead) != compact.InputFiles {
		t.Errorf("the proxy saw %d data files read, the compaction had %d inputs", len(dataRead), compact.InputFiles)
	}
}
