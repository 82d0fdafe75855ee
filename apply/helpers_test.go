package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// env is a real lakehouse (sqlite catalog, file warehouse), a configuration
// directory with an HCL policy for it, and a session over it.
type env struct {
	t    *testing.T
	dir  string
	lake *testkit.Lakehouse
	cfg  *config.Config
	sess *providers.Session
}

const orders = "sales.orders"

// policyHCL is a demo-like policy: small target (so the test's tiny files
// are compaction candidates), short retention, orphan sweep, manifests.
const policyHCL = `
policy "base" {
  target_file_size = "64MiB"
  compaction {
    min_input_files = 2
  }
  snapshot_retention {
    max_age       = "2d"
    min_snapshots = 1
  }
  orphan_files {
    older_than = "3d"
  }
  manifests {
    max_count = 3
  }
  properties = {
    "write.parquet.compression-codec" = "zstd"
  }
}

tables "lake.sales.*" {
  policy = policy.base
}
`

// sortedPolicyHCL is policyHCL with sort_order = order (HCL) in the base policy.
func sortedPolicyHCL(order string) string {
	return strings.Replace(policyHCL, `target_file_size = "64MiB"`, `target_file_size = "64MiB"
  sort_order       = `+order, 1)
}

func newEnv(t *testing.T, extraHCL string) *env {
	t.Helper()
	dir := t.TempDir()
	lake := testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	e := &env{t: t, dir: dir, lake: lake}
	e.writeConfig(lake.HCL() + policyHCL + extraHCL)
	return e
}

func (e *env) writeConfig(src string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		e.t.Fatal(err)
	}
	cfg, diags := config.Load(e.dir, config.LoadOptions{})
	if diags.HasErrors() {
		e.t.Fatalf("config: %s", diags.Error())
	}
	if e.sess != nil {
		_ = e.sess.Close()
	}
	e.cfg = cfg
	e.sess = providers.Open(cfg, providers.Options{})
	sess := e.sess
	e.t.Cleanup(func() { _ = sess.Close() })
}

// debtTable creates a partitioned table with maintenance debt: many small
// files over 3 days, 10-day-old history, then two young commits.
func (e *env) debtTable(name string, props map[string]string) *table.Table {
	e.t.Helper()
	tbl := e.lake.CreateTable(e.t, name, testkit.TableOptions{Partitioned: true, Properties: props})
	tbl = testkit.Append(e.t, tbl, 9, 40, 3)
	tbl = e.lake.Backdate(e.t, tbl, 10*24*time.Hour)
	return testkit.Append(e.t, tbl, 2, 40, 3)
}

func (e *env) plan() *diff.Plan {
	e.t.Helper()
	p, err := Plan(context.Background(), e.cfg, e.sess, PlanOptions{Version: "test"})
	if err != nil {
		e.t.Fatalf("plan: %v", err)
	}
	return p
}

func (e *env) apply(p *diff.Plan, saved bool) *Results {
	e.t.Helper()
	res, err := Apply(context.Background(), e.cfg, e.sess, p, ApplyOptions{Saved: saved, Version: "test",
		Backoff: func(int) time.Duration { return 20 * time.Millisecond }})
	if err != nil {
		e.t.Fatalf("apply: %v", err)
	}
	return res
}

func tablePlan(t *testing.T, p *diff.Plan, addr string) diff.TablePlan {
	t.Helper()
	for _, tp := range p.Tables {
		if tp.Address == addr {
			return tp
		}
	}
	t.Fatalf("%s not in plan (errors: %v)", addr, p.Errors)
	return diff.TablePlan{}
}

func actionOf(tp diff.TablePlan, typ diff.ActionType) *diff.Action {
	for i := range tp.Actions {
		if tp.Actions[i].Type == typ {
			return &tp.Actions[i]
		}
	}
	return nil
}

func tableResult(t *testing.T, r *Results, addr string) TableResult {
	t.Helper()
	for _, tr := range r.Tables {
		if tr.Address == addr {
			return tr
		}
	}
	t.Fatalf("%s not in results", addr)
	return TableResult{}
}

func describe(r *Results) string {
	var b strings.Builder
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "%s %s %s\n", t.Address, t.Status, t.Error)
		for _, a := range t.Actions {
			fmt.Fprintf(&b, "  %s %s reason=%q err=%q notApplied=%v\n", a.Type, a.Status, a.Reason, a.Error, a.NotApplied)
		}
	}
	return b.String()
}

// strayFile writes an unreferenced file in the table's data directory with
// the given age.
func strayFile(t *testing.T, tbl *table.Table, name string, age time.Duration) string {
	t.Helper()
	p := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("not referenced by any snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
	return p
}

// filesOfSnapshots lists every file the given snapshots reach (manifest
// lists, manifests, all entries): what an expiry of them may delete.
func filesOfSnapshots(t *testing.T, tbl *table.Table, ids []int64) map[string]bool {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, id := range ids {
		s := tbl.SnapshotByID(id)
		if s == nil {
			continue
		}
		out[strings.TrimPrefix(s.ManifestList, "file://")] = true
		mans, err := s.Manifests(fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mans {
			out[strings.TrimPrefix(m.FilePath(), "file://")] = true
			for e, err := range m.Entries(fs, false) {
				if err != nil {
					t.Fatal(err)
				}
				out[strings.TrimPrefix(e.DataFile().FilePath(), "file://")] = true
			}
		}
	}
	return out
}

// checkReferencedExist fails when any file the table's snapshots reach, or
// its current metadata, is missing.
func checkReferencedExist(t *testing.T, tbl *table.Table) {
	t.Helper()
	var ids []int64
	for _, s := range tbl.Metadata().Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tbl.Metadata().Snapshots() {
		mans, err := s.Manifests(fs)
		if err != nil {
			t.Fatalf("snapshot %d: %v", s.SnapshotID, err)
		}
		for _, m := range mans {
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					t.Fatalf("manifest %s: %v", m.FilePath(), err)
				}
				p := strings.TrimPrefix(e.DataFile().FilePath(), "file://")
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("snapshot %d references missing %s", s.SnapshotID, p)
				}
			}
		}
	}
	if _, err := os.Stat(strings.TrimPrefix(tbl.MetadataLocation(), "file://")); err != nil {
		t.Fatalf("current metadata missing: %v", err)
	}
}

// appendEvents appends n rows with event_id from start through iceberg-go,
// returning the error instead of failing (it runs in a writer goroutine).
func appendEvents(ctx context.Context, tbl *table.Table, start int64, n int) (*table.Table, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	day := testkit.Day0
	for i := range int64(n) {
		id := start + i
		for f := range sc.NumFields() {
			switch fb := b.Field(f).(type) {
			case *array.Int64Builder:
				fb.Append(id)
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(day.Add(time.Duration(id) * time.Second).UnixMicro()))
			case *array.StringBuilder:
				fb.Append("w")
			default:
				return nil, fmt.Errorf("unexpected column type %T", fb)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer at.Release()
	return tbl.AppendTable(ctx, at, 1024, nil)
}
