package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/testkit"
)

// corpusTable is one row of internal/testdata/tables/README.md: a table
// another engine wrote, committed as test data with its licence.
type corpusTable struct {
	Name    string
	Current string // current metadata file, relative to the table
	Rows    int64  // live rows of the current snapshot
	// Unreadable: the README's rows are "unreadable": the table's data
	// files are on storage that neither its IO nor DuckDB here can open
	// (duckdb-generated-bounds: s3:// paths of a local table). No values
	// are compared; the plan must refuse what would read them, and apply
	// must fail nothing it did not refuse.
	Unreadable bool
	// Pending names the issue item a table waits for; the test requires
	// that its plan shows a refusal or that its apply fails, and fails when
	// it no longer does (so the mark cannot outlive the fix).
	Pending string
}

// corpusDir is the corpus in the repository.
func corpusDir(t testing.TB) string {
	return filepath.Join(testenv.RepoRoot(t), "internal", "testdata", "tables")
}

// loadCorpus reads the README's table, the one place the corpus is described.
func loadCorpus(t testing.TB) []corpusTable {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(corpusDir(t), "README.md"))
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	var out []corpusTable
	var header []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			header = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if header == nil {
			header = cells
			continue
		}
		if strings.HasPrefix(cells[0], "---") || header[0] != "table" {
			continue
		}
		col := func(name string) string {
			i := slices.Index(header, name)
			if i < 0 || i >= len(cells) {
				t.Fatalf("corpus README: no column %q in %q", name, line)
			}
			return cells[i]
		}
		ct := corpusTable{Name: col("table"), Current: col("current metadata"), Pending: col("pending"), Unreadable: col("rows") == "unreadable"}
		if !ct.Unreadable {
			rows, err := strconv.ParseInt(strings.ReplaceAll(col("rows"), ",", ""), 10, 64)
			if err != nil {
				t.Fatalf("corpus README: rows of %s: %v", cells[0], err)
			}
			ct.Rows = rows
		}
		out = append(out, ct)
	}
	if len(out) < 25 {
		t.Fatalf("corpus README lists %d tables, want at least 25", len(out))
	}
	return out
}

// corpusPolicies are the policies every corpus table goes through, each on
// a fresh copy. sort_order is filled per table (its first sortable column).
var corpusPolicies = []struct {
	name, hcl string
	sort      bool
	orphans   bool
}{
	{name: "binpack", hcl: `
  target_file_size = "64MiB"
  compaction {
    strategy        = "binpack"
    min_input_files = 2
  }
  manifests {
    max_count = 1
  }`},
	{name: "sort", sort: true, hcl: `
  target_file_size = "64MiB"
  compaction {
    strategy        = "sort"
    min_input_files = 1
  }`},
	{name: "retention_orphans", orphans: true, hcl: `
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = 1
  }
  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.95
  }`},
}

// TestCorpusPlanApplyPlan runs plan -> apply -> plan on every table of the
// corpus under each policy and requires: the same live rows and the same
// values (an order-independent fingerprint) read by iceberg-go and by
// DuckDB, every referenced file present, nothing young and nothing that is
// not Iceberg's deleted, and a second plan without actions (what
// plan -detailed-exitcode reports as exit 0). A table whose plan shows a
// refusal keeps its other actions; an apply that fails where the plan said
// nothing fails the test, unless the README marks the table pending.
func TestCorpusPlanApplyPlan(t *testing.T) {
	corpus := loadCorpus(t)
	duck := testenv.DuckDBReader(t)
	stillPending := map[string]bool{}
	for _, pol := range corpusPolicies {
		t.Run(pol.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			be := sqliteFile(ctx, t)
			ns := "corpus"
			createNamespace(ctx, t, be.cat, ns)
			now := time.Now()
			old := now.Add(-30 * 24 * time.Hour)
			type state struct {
				ct         corpusTable
				ident      table.Identifier
				loc        string
				goFP, duck fingerprint
				goErr      error  // iceberg-go could not read the table
				duckErr    error  // nor DuckDB (a file iceberg-go cannot list)
				problems   int    // what a pending table still gets wrong
				refused    bool   // its first plan showed a refusal or it failed
				young      string // a fresh unreferenced file: the age guard keeps it
				oldOrphan  string // an old unreferenced Iceberg-named file
				sideFiles  []string
			}
			var states []*state
			var blocks strings.Builder
			for _, ct := range corpus {
				name := strings.ReplaceAll(ct.Name, "-", "_")
				loc := strings.TrimPrefix(be.fixtureLocation(ns, name), "file://")
				md := testkit.CopyTable(t, filepath.Join(corpusDir(t), ct.Name), loc, ct.Current)
				st := &state{ct: ct, ident: table.Identifier{ns, name}, loc: loc}
				// Every copied file is as old as the table's history, so
				// the orphan age guard judges the strays below alone.
				st.sideFiles = backdate(t, loc, old)
				st.oldOrphan = filepath.Join(loc, "data", "icewright-corpus-orphan.parquet")
				st.young = filepath.Join(loc, "data", "icewright-corpus-young.parquet")
				for _, p := range []string{st.oldOrphan, st.young} {
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte("not referenced by any snapshot"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Chtimes(st.oldOrphan, old, old); err != nil {
					t.Fatal(err)
				}
				be.register(ctx, t, st.ident, "file://"+md)
				tbl, err := be.cat.LoadTable(ctx, st.ident)
				if err != nil {
					t.Fatalf("%s: load: %v", ct.Name, err)
				}
				// A table iceberg-go cannot read is kept in the run: its
				// plan must refuse what it cannot do (pending), and its
				// files and DuckDB's values must survive whatever runs.
				if st.goFP, st.goErr = goFingerprint(ctx, tbl); ct.Unreadable {
					if st.goErr == nil {
						t.Errorf("%s: the README says unreadable, iceberg-go reads %d rows", ct.Name, st.goFP.Rows)
					}
					st.goErr = fmt.Errorf("unreadable: %w", st.goErr)
				} else if st.goErr != nil {
					if ct.Pending == "" {
						t.Errorf("%s: %v", ct.Name, st.goErr)
					}
				} else if st.goFP.Rows != ct.Rows {
					t.Errorf("%s: iceberg-go reads %d rows, the README says %d", ct.Name, st.goFP.Rows, ct.Rows)
				}
				if ct.Unreadable {
					st.duckErr = errors.New("unreadable: not read")
				} else if st.duck, st.duckErr = duckFingerprint(ctx, duck, tbl); st.duckErr != nil {
					if ct.Pending == "" {
						t.Errorf("%s: %v", ct.Name, st.duckErr)
					}
				} else if st.duck.Rows != ct.Rows {
					t.Errorf("%s: DuckDB reads %d rows, the README says %d", ct.Name, st.duck.Rows, ct.Rows)
				}
				if pol.sort {
					if col := sortColumn(tbl.Schema()); col != "" {
						fmt.Fprintf(&blocks, "table %q {\n  policy = policy.corpus\n  sort_order = [%q]\n}\n", catalogName+"."+ns+"."+name, col)
					}
				}
				states = append(states, st)
			}
			cfg := writeCorpusConfig(t, be, ns, pol.hcl, blocks.String())
			nowFn := func() time.Time { return now }
			pending := map[string]bool{}
			for _, st := range states {
				if st.ct.Pending != "" {
					pending[catalogName+"."+strings.Join(st.ident, ".")] = true
				}
			}
			// A table that cannot be observed is an error of its own in
			// the plan (shown, the others still planned); only a pending
			// table may have one.
			requireErrorsPending := func(which string, errs []diff.TableError) {
				for _, e := range errs {
					if !pending[e.Address] {
						t.Errorf("%s plan: %s: %s", which, e.Address, e.Message)
					} else {
						t.Logf("%s plan: %s (pending): %s", which, e.Address, e.Message)
					}
				}
			}
			// fail reports what a table gets wrong: an error, or for a
			// table pending on another item a log line counted against
			// its mark. Deleting what must stay is an error for every
			// table, pending or not.
			fail := func(st *state, format string, args ...any) {
				t.Helper()
				if st.ct.Pending == "" {
					t.Errorf(format, args...)
					return
				}
				st.problems++
				t.Logf("pending ("+st.ct.Pending+"): "+format, args...)
			}
			p, res := planApply(ctx, t, cfg, nowFn, nil)
			requireErrorsPending("first", p.Errors)
			planned := map[string]bool{}
			for _, tp := range p.Tables {
				planned[tp.Address] = true
			}
			failed := map[string]string{}
			for _, tr := range res.Tables {
				for _, a := range tr.Actions {
					if a.Error != "" {
						failed[tr.Address] += fmt.Sprintf("%s: %s; ", a.Type, a.Error)
					}
				}
				// A table whose plan refused actions carries them
				// (planned_refusals; a table with nothing else fails
				// with exactly those): shown in the plan, so not an
				// apply failure. Anything else in tr.Error is one.
				if tr.Error != "" && (len(tr.PlannedRefusals) == 0 || !strings.HasPrefix(tr.Error, "the plan refused actions: ")) {
					failed[tr.Address] += tr.Error
				}
			}
			for _, st := range states {
				addr := catalogName + "." + strings.Join(st.ident, ".")
				if !planned[addr] {
					t.Logf("%s: not planned (pending: %s)", st.ct.Name, st.ct.Pending)
					continue
				}
				tp := findTable(t, p, addr)
				t.Logf("%s: %v refusals %+v", st.ct.Name, actionTypes(tp), tp.Refusals)
				st.refused = len(tp.Refusals) > 0 || failed[addr] != ""
				if msg := failed[addr]; msg != "" {
					fail(st, "%s: apply failed where the plan showed no refusal: %s", st.ct.Name, msg)
				}
				tbl, err := be.cat.LoadTable(ctx, st.ident)
				if err != nil {
					t.Fatalf("%s: load after apply: %v", st.ct.Name, err)
				}
				if st.goErr == nil {
					if got, err := goFingerprint(ctx, tbl); err != nil {
						t.Errorf("%s: after apply: %v", st.ct.Name, err)
					} else if !got.equal(st.goFP) {
						fail(st, "%s: iceberg-go reads other values after apply:\n before %v\n after  %v", st.ct.Name, st.goFP, got)
					}
				}
				if st.duckErr == nil {
					if got, err := duckFingerprint(ctx, duck, tbl); err != nil {
						t.Errorf("%s: after apply: %v", st.ct.Name, err)
					} else if !got.equal(st.duck) {
						fail(st, "%s: DuckDB reads other values after apply:\n before %v\n after  %v", st.ct.Name, st.duck, got)
					}
				}
				requireReferencedPresent(ctx, t, st.ct.Name, tbl)
				for _, p := range append([]string{st.young}, st.sideFiles...) {
					if _, err := os.Stat(p); err != nil {
						t.Errorf("%s: %s was deleted (young or not an Iceberg file): %v", st.ct.Name, p, err)
					}
				}
				_, err = os.Stat(st.oldOrphan)
				switch orphanRefused := slices.ContainsFunc(tp.Refusals, func(r diff.Refusal) bool { return r.Action == "remove_orphan_files" }); {
				case pol.orphans && err == nil && !orphanRefused && failed[addr] == "":
					t.Errorf("%s: the old orphan %s survived an orphan policy whose plan refused nothing", st.ct.Name, st.oldOrphan)
				case !pol.orphans && err != nil:
					t.Errorf("%s: %s deleted without an orphan policy: %v", st.ct.Name, st.oldOrphan, err)
				}
			}
			second := planOnly(ctx, t, cfg, nowFn)
			requireErrorsPending("second", second.Errors)
			byAddr := map[string]*state{}
			for _, st := range states {
				byAddr[catalogName+"."+strings.Join(st.ident, ".")] = st
			}
			for _, tp := range second.Tables {
				if len(tp.Actions) > 0 {
					if st := byAddr[tp.Address]; st != nil {
						fail(st, "%s: not converged, the second plan has %v (plan -detailed-exitcode would exit 2)", tp.Address, actionTypes(&tp))
					} else {
						t.Errorf("%s: not converged, the second plan has %v", tp.Address, actionTypes(&tp))
					}
				}
			}
			for _, st := range states {
				if st.problems > 0 || st.refused || st.goErr != nil || st.duckErr != nil || !planned[catalogName+"."+strings.Join(st.ident, ".")] {
					stillPending[st.ct.Name] = true
				}
			}
		})
	}
	// A mark must go with its fix: a pending table that nothing fails
	// under any policy any more is an error.
	for _, ct := range corpus {
		if ct.Pending != "" && !stillPending[ct.Name] && !t.Failed() {
			t.Errorf("%s: marked pending (%s) but nothing about it fails any more: remove the mark", ct.Name, ct.Pending)
		}
	}
}

// writeCorpusConfig writes and loads a configuration giving every table of
// ns the corpus policy; blocks are extra table blocks (sort orders).
func writeCorpusConfig(t testing.TB, be *backend, ns, policy, blocks string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	src := fmt.Sprintf("catalog %q {\n  %s}\npolicy \"corpus\" {%s\n}\ntables \"%s.%s.*\" {\n  policy = policy.corpus\n}\n%s",
		catalogName, be.hcl(catalogName), policy, catalogName, ns, blocks)
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(dir, config.LoadOptions{Env: os.Environ()})
	if diags.HasErrors() {
		t.Fatalf("config:\n%s\n%s", src, diags.Error())
	}
	return cfg
}

// backdate sets every file under root to mtime at and returns those that
// are not Iceberg's own (Hadoop .crc side files and the like).
func backdate(t testing.TB, root string, at time.Time) []string {
	t.Helper()
	var side []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !icebergFile(d.Name()) {
			side = append(side, p)
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
	return side
}

func icebergFile(name string) bool {
	for _, s := range []string{".parquet", ".avro", ".orc", ".metadata.json", ".puffin", ".stats"} {
		if strings.HasSuffix(name, s) && !strings.HasPrefix(name, ".") {
			return true
		}
	}
	return name == "version-hint.text"
}

// requireReferencedPresent checks that every file the table's metadata can
// reach exists: metadata log, manifest lists (or a v1 snapshot's inline
// manifests), manifests, data and delete files, statistics.
func requireReferencedPresent(ctx context.Context, t testing.TB, name string, tbl *table.Table) {
	t.Helper()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) {
		if scheme, _, ok := strings.Cut(p, "://"); ok && scheme != "file" {
			return // another storage (a corpus table's foreign paths): nothing here to stat
		}
		if _, err := os.Stat(localPath(p)); err != nil {
			t.Errorf("%s: referenced file missing: %s", name, p)
		}
	}
	md := tbl.Metadata()
	exists(tbl.MetadataLocation())
	for e := range md.PreviousFiles() {
		exists(e.MetadataFile)
	}
	for s := range md.Statistics() {
		exists(s.StatisticsPath)
	}
	for _, s := range md.Snapshots() {
		if s.ManifestList != "" {
			exists(s.ManifestList)
		}
		mans, err := s.Manifests(fsys)
		if err != nil {
			t.Errorf("%s: manifests of snapshot %d: %v", name, s.SnapshotID, err)
			continue
		}
		for _, m := range mans {
			exists(m.FilePath())
			entries, err := m.FetchEntries(fsys, true)
			if err != nil {
				t.Errorf("%s: entries of %s: %v", name, m.FilePath(), err)
				continue
			}
			for _, e := range entries {
				exists(e.DataFile().FilePath())
			}
		}
	}
}

// fingerprint is an order-independent digest of a table's live rows: the
// row count and, per column, the wrapping sum of a hash of each value.
type fingerprint struct {
	Rows    int64
	Columns map[string]string
}

func (f fingerprint) equal(o fingerprint) bool {
	if f.Rows == 0 && o.Rows == 0 {
		// No rows: the DuckDB reader reports no columns when the table
		// has no data file left, and zero sums when its files hold no
		// live row.
		return true
	}
	if f.Rows != o.Rows || len(f.Columns) != len(o.Columns) {
		return false
	}
	for k, v := range f.Columns {
		if o.Columns[k] != v {
			return false
		}
	}
	return true
}

// goFingerprint reads the table with iceberg-go's scanner (deletes
// applied) as icewright's rewrite reads it: compaction.ScanTable adds the
// parts of the spec's column projection iceberg-go v0.7.0 lacks (partition
// values of columns absent from a file, defaults in the spec's JSON forms).
func goFingerprint(ctx context.Context, tbl *table.Table) (fingerprint, error) {
	fp := fingerprint{Columns: map[string]string{}}
	sums := map[string]uint64{}
	err := compaction.ScanTable(ctx, tbl, func(rec arrow.RecordBatch) error {
		fp.Rows += rec.NumRows()
		for i, col := range rec.Columns() {
			name := rec.Schema().Field(i).Name
			for j := range col.Len() {
				h := fnv.New64a()
				if col.IsNull(j) {
					h.Write([]byte{0})
				} else {
					h.Write([]byte{1})
					h.Write([]byte(col.ValueStr(j)))
				}
				sums[name] += h.Sum64()
			}
		}
		return nil
	})
	if err != nil {
		return fingerprint{}, fmt.Errorf("iceberg-go scan: %w", err)
	}
	for _, f := range tbl.Schema().Fields() {
		fp.Columns[f.Name] = strconv.FormatUint(sums[f.Name], 10)
	}
	return fp, nil
}

// duckJob is the input of scripts/duckdb-fingerprint.cjs.
type duckJob struct {
	Columns     []duckColumn     `json:"columns"`
	NameMapping map[int][]string `json:"name_mapping,omitempty"`
	Files       []duckFile       `json:"files"`
}

type duckColumn struct {
	ID     int          `json:"id"`
	Name   string       `json:"name"`
	Type   string       `json:"type"`
	Fields []duckColumn `json:"fields,omitempty"` // a struct's
}

// duckColumnOf is f for the script, with a struct's fields (the script
// rebuilds a struct whose file lacks a field with a default).
func duckColumnOf(f iceberg.NestedField) duckColumn {
	c := duckColumn{ID: f.ID, Name: f.Name, Type: duckType(f.Type)}
	if st, ok := f.Type.(*iceberg.StructType); ok {
		for _, k := range st.FieldList {
			c.Fields = append(c.Fields, duckColumnOf(k))
		}
	}
	return c
}

type duckFile struct {
	Path string `json:"path"`
	// Name is the data file's path as the table's metadata and its
	// position deletes spell it (Java writes "file:/x"), when it is not Path.
	Name             string            `json:"name,omitempty"`
	Defaults         map[string]string `json:"defaults,omitempty"`
	PositionDeletes  []string          `json:"position_deletes,omitempty"`
	DeletedPositions []uint64          `json:"deleted_positions,omitempty"`
	EqualityDeletes  []duckEqDelete    `json:"equality_deletes,omitempty"`
}

type duckEqDelete struct {
	Path string `json:"path"`
	IDs  []int  `json:"ids"`
}

// duckFingerprint reads the table's live rows with DuckDB. iceberg-go only
// lists the files (scan planning); DuckDB reads every value, matching
// columns by field id and applying the deletes (see the script's comment
// for why the iceberg extension is not used).
func duckFingerprint(ctx context.Context, duck testenv.DuckDB, tbl *table.Table) (fingerprint, error) {
	job := duckJob{Files: []duckFile{}}
	sc := tbl.Schema()
	for _, f := range sc.Fields() {
		job.Columns = append(job.Columns, duckColumnOf(f))
	}
	if raw := tbl.Properties()["schema.name-mapping.default"]; raw != "" {
		var mapping []struct {
			FieldID int      `json:"field-id"`
			Names   []string `json:"names"`
		}
		if err := json.Unmarshal([]byte(raw), &mapping); err != nil {
			return fingerprint{}, fmt.Errorf("name mapping: %w", err)
		}
		job.NameMapping = map[int][]string{}
		for _, m := range mapping {
			job.NameMapping[m.FieldID] = m.Names
		}
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return fingerprint{}, fmt.Errorf("plan files: %w", err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fingerprint{}, err
	}
	local := localPath
	for _, task := range tasks {
		df := task.File
		f := duckFile{Path: local(df.FilePath()), Defaults: map[string]string{}}
		if f.Path != df.FilePath() && len(task.DeleteFiles) > 0 {
			f.Name = df.FilePath()
		}
		// Every initial default, at any depth (a field added inside a
		// struct too).
		for _, col := range allFields(sc.Fields()) {
			if col.InitialDefault != nil {
				f.Defaults[strconv.Itoa(col.ID)] = duckLiteral(col.InitialDefault, col.Type)
			}
		}
		// The spec: an identity-partitioned column absent from a file is
		// read from the file's partition tuple.
		if spec := tbl.Metadata().PartitionSpecByID(int(df.SpecID())); spec != nil {
			part := df.Partition()
			for _, pf := range spec.Fields() {
				if _, ok := pf.Transform.(iceberg.IdentityTransform); !ok {
					continue
				}
				col, ok := sc.FindFieldByID(pf.SourceID())
				if !ok {
					continue
				}
				if v, ok := part[pf.FieldID]; ok {
					f.Defaults[strconv.Itoa(pf.SourceID())] = duckLiteral(v, col.Type)
				}
			}
		}
		for _, d := range task.DeleteFiles {
			f.PositionDeletes = append(f.PositionDeletes, local(d.FilePath()))
		}
		for _, d := range task.DeletionVectorFiles {
			bm, err := dv.ReadDV(fsys, d)
			if err != nil {
				return fingerprint{}, fmt.Errorf("deletion vector %s: %w", d.FilePath(), err)
			}
			for p := range bm.Positions() {
				f.DeletedPositions = append(f.DeletedPositions, p)
			}
		}
		for _, d := range task.EqualityDeleteFiles {
			f.EqualityDeletes = append(f.EqualityDeletes, duckEqDelete{Path: local(d.FilePath()), IDs: d.EqualityFieldIDs()})
		}
		job.Files = append(job.Files, f)
	}
	in, err := json.Marshal(job)
	if err != nil {
		return fingerprint{}, err
	}
	cmd := exec.CommandContext(ctx, duck.Node, duck.Script)
	cmd.Env = duck.Env()
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fingerprint{}, fmt.Errorf("DuckDB reader: %w: %s", err, stderr.String())
	}
	var res struct {
		Rows    string            `json:"rows"`
		Columns map[string]string `json:"columns"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return fingerprint{}, fmt.Errorf("DuckDB reader output %q: %w", out, err)
	}
	n, err := strconv.ParseInt(res.Rows, 10, 64)
	if err != nil {
		return fingerprint{}, fmt.Errorf("DuckDB rows %q: %w", res.Rows, err)
	}
	return fingerprint{Rows: n, Columns: res.Columns}, nil
}

// duckType is DuckDB's name for an Iceberg type.
func duckType(typ iceberg.Type) string {
	switch tt := typ.(type) {
	case iceberg.BooleanType:
		return "BOOLEAN"
	case iceberg.Int32Type:
		return "INTEGER"
	case iceberg.Int64Type:
		return "BIGINT"
	case iceberg.Float32Type:
		return "FLOAT"
	case iceberg.Float64Type:
		return "DOUBLE"
	case iceberg.DecimalType:
		return fmt.Sprintf("DECIMAL(%d,%d)", tt.Precision(), tt.Scale())
	case iceberg.DateType:
		return "DATE"
	case iceberg.TimeType:
		return "TIME"
	case iceberg.TimestampType:
		return "TIMESTAMP"
	case iceberg.TimestampTzType:
		return "TIMESTAMPTZ"
	case iceberg.TimestampNsType:
		return "TIMESTAMP_NS"
	case iceberg.TimestampTzNsType:
		// DuckDB (1.5) has no TIMESTAMPTZ_NS: it reads a Parquet
		// timestamp(NANOS, UTC) column as TIMESTAMPTZ, microseconds. Its
		// fingerprint of such a column sees microseconds only; the
		// nanoseconds are checked by icewright's reader (goFingerprint).
		return "TIMESTAMPTZ"
	case iceberg.StringType:
		return "VARCHAR"
	case iceberg.UUIDType:
		return "UUID"
	case iceberg.BinaryType, iceberg.FixedType:
		return "BLOB"
	case *iceberg.StructType:
		var fields []string
		for _, f := range tt.FieldList {
			fields = append(fields, strconv.Quote(f.Name)+" "+duckType(f.Type))
		}
		return "STRUCT(" + strings.Join(fields, ", ") + ")"
	case *iceberg.ListType:
		return duckType(tt.Element) + "[]"
	case *iceberg.MapType:
		return "MAP(" + duckType(tt.KeyType) + ", " + duckType(tt.ValueType) + ")"
	}
	return "VARCHAR"
}

// duckLiteral renders a partition value or a default as a DuckDB literal of
// the column's type.
func duckLiteral(v any, typ iceberg.Type) string {
	cast := func(s string) string { return "CAST(" + sqlQuote(s) + " AS " + duckType(typ) + ")" }
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		return strconv.FormatBool(x)
	case int32, int64, int:
		return fmt.Sprintf("CAST(%d AS %s)", x, duckType(typ))
	case float32:
		return cast(strconv.FormatFloat(float64(x), 'g', -1, 32))
	case float64:
		switch typ.(type) {
		case iceberg.Int32Type, iceberg.Int64Type:
			// A default decoded from JSON as a number.
			return fmt.Sprintf("CAST(%d AS %s)", int64(x), duckType(typ))
		}
		return cast(strconv.FormatFloat(x, 'g', -1, 64))
	case string:
		switch typ.(type) {
		case iceberg.BinaryType, iceberg.FixedType:
			// A default's single-value JSON form: hex.
			return "from_hex(" + sqlQuote(x) + ")"
		}
		return cast(x)
	case []byte:
		return "from_hex(" + sqlQuote(hex.EncodeToString(x)) + ")"
	case iceberg.Date:
		return fmt.Sprintf("CAST(DATE '1970-01-01' + %d AS DATE)", int32(x))
	case iceberg.Time:
		return fmt.Sprintf("CAST(TIME '00:00:00' + to_microseconds(%d) AS TIME)", int64(x))
	case iceberg.Timestamp:
		return fmt.Sprintf("CAST(make_timestamp(%d) AS %s)", int64(x), duckType(typ))
	case iceberg.TimestampNano:
		return fmt.Sprintf("CAST(make_timestamp_ns(%d) AS %s)", int64(x), duckType(typ))
	case iceberg.Decimal:
		return cast(x.String())
	case fmt.Stringer: // uuid.UUID
		return cast(x.String())
	}
	return cast(fmt.Sprint(v))
}

// allFields is fields and, depth first, the fields of their structs.
func allFields(fields []iceberg.NestedField) []iceberg.NestedField {
	var out []iceberg.NestedField
	for _, f := range fields {
		out = append(out, f)
		if st, ok := f.Type.(*iceberg.StructType); ok {
			out = append(out, allFields(st.FieldList)...)
		}
	}
	return out
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sortColumn is the first top-level column a sort order may use.
func sortColumn(sc *iceberg.Schema) string {
	for _, f := range sc.Fields() {
		switch f.Type.(type) {
		case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType:
			continue
		}
		return f.Name
	}
	return ""
}
