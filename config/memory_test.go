package config

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// oneLineTables writes a configuration of n one-line table blocks, the shape
// of issue 43.7's 10 MB configuration.
func oneLineTables(t testing.TB, dir string, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString(baseCatalog)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "table \"lake.ns.t%06d\" { target_file_size = \"128MiB\" }\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestTableBlockMemory (issue 43.7): what a loaded Config keeps per one-line
// table block. It was about 6 KB (a full PolicyBody of 4.6 KB per block
// and the file's whole syntax tree), so 185,000 blocks held 1.1 GB after
// Load and peaked at 2.4 GB; the block now keeps what it set.
func TestTableBlockMemory(t *testing.T) {
	const n = 5000
	dir := t.TempDir()
	oneLineTables(t, dir, n)
	before := heapInUse()
	cfg, diags := Load(dir, LoadOptions{Version: "0.1.0"})
	after := heapInUse()
	if diags.HasErrors() || len(cfg.Tables) != n {
		t.Fatalf("%d tables, %v", len(cfg.Tables), diags)
	}
	perBlock := (int64(after) - int64(before)) / n
	t.Logf("Config keeps %d bytes per one-line table block", perBlock)
	if perBlock > 1024 {
		t.Errorf("Config keeps %d bytes per one-line table block, want at most 1 KiB", perBlock)
	}
	// What was compacted is still all there.
	b := cfg.Tables[41].Body()
	if !b.TargetFileSize.Set || b.TargetFileSize.Value != 128<<20 || b.TargetFileSize.Block != `table "lake.ns.t000042"` ||
		b.TargetFileSize.Origin.Start.Line == 0 || b.Compaction.Declared {
		t.Fatalf("body of table 42: %+v", b.TargetFileSize)
	}
	runtime.KeepAlive(cfg)
}

// TestCompactBodyRoundTrip: a body with every kind of setting, nested
// blocks and properties comes back from compact as it went in.
func TestCompactBodyRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := baseCatalog + `table "lake.a.b" {
  target_file_size = "256MiB"
  sort_order       = ["day(ts)", "id desc"]
  properties       = { "write.format.default" = "parquet" }
  compaction {
    strategy        = "sort"
    min_input_files = 3
  }
  snapshot_retention {
    max_age = "3d"
  }
  dangling_deletes {}
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load(dir, LoadOptions{Version: "0.1.0"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	b := cfg.Tables[0].Body()
	if b.TargetFileSize.Value != 256<<20 || len(b.SortOrder.Value) != 2 || b.Properties["write.format.default"].Value != "parquet" ||
		!b.Compaction.Declared || b.Compaction.Strategy.Value != "sort" || b.Compaction.MinInputFiles.Value != 3 ||
		!b.SnapshotRetention.Declared || b.SnapshotRetention.MaxAge.Value.Hours() != 72 ||
		!b.DanglingDeletes.Declared || b.DanglingDeletes.DeclRange.Start.Line != 18 ||
		b.OrphanFiles.Declared || b.Manifests.MaxCount.Set {
		t.Fatalf("round trip lost something: %+v", b)
	}
}

// TestLoadLimits (issue 43.7): a configuration over the block or byte limit
// is refused with an error that says where, what the limit is and why,
// before it is decoded.
func TestLoadLimits(t *testing.T) {
	t.Run("blocks", func(t *testing.T) {
		defer func(n int) { maxBlocks = n }(maxBlocks)
		maxBlocks = 100
		dir := t.TempDir()
		oneLineTables(t, dir, 150)
		cfg, diags := Load(dir, LoadOptions{Version: "0.1.0"})
		wantError(t, diags, "Too many blocks", "more than 100 blocks; this is block 101. icewright reads at most 100")
		for _, d := range diags {
			// Block 101 is table 100: the catalog block is the first.
			if d.Summary == "Too many blocks" && (d.Subject == nil || d.Subject.Start.Line != 7+99 || !strings.HasSuffix(d.Subject.Filename, "main.icewright.hcl")) {
				t.Fatalf("subject %v", d.Subject)
			}
		}
		if len(cfg.Tables) != 0 {
			t.Fatalf("%d tables decoded past the limit", len(cfg.Tables))
		}
	})
	t.Run("bytes", func(t *testing.T) {
		defer func(n int) { maxConfigBytes = n }(maxConfigBytes)
		maxConfigBytes = 4096
		dir := t.TempDir()
		oneLineTables(t, dir, 40) // about 2.4 KB
		if err := os.WriteFile(filepath.Join(dir, "more.icewright.hcl"), []byte(strings.Repeat("# padding\n", 300)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, diags := Load(dir, LoadOptions{Version: "0.1.0"})
		wantError(t, diags, "Configuration too large", "more than 4 KiB, the limit icewright reads")
		for _, d := range diags {
			if d.Summary == "Configuration too large" && (d.Subject == nil || !strings.HasSuffix(d.Subject.Filename, "more.icewright.hcl") || d.Subject.Start.Line != 1) {
				t.Fatalf("subject %v", d.Subject)
			}
		}
	})
}

// TestParseInChunks: a file parsed a run of items at a time gives the
// blocks, ranges and byte offsets of the whole-file parse; a file whose
// cuts would fall inside a heredoc, a comment or brackets is cut elsewhere
// or parsed whole.
func TestParseInChunks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "table \"lake.ns.t%d\" { target_file_size = \"128MiB\" }\n", i)
		case 1:
			fmt.Fprintf(&b, "locals {\n  h%d = <<-EOT\n    }\n    table \"x.y.z\" {\n  EOT\n}\n", i)
		case 2:
			fmt.Fprintf(&b, "/* a comment\n}\n*/ policy \"p%d\" {\n  properties = {\n    \"a\" = \"${\"}\"}\\\"\"\n  }\n}\n", i)
		case 3:
			fmt.Fprintf(&b, "# a } comment\r\ntables \"lake.n%d.*\" {\r\n  exclude = [\r\n    \"lake.n.x\",\r\n  ]\r\n}\r\n", i)
		default:
			fmt.Fprintf(&b, "// x\nlocals { l%d = [for x in [1] : \"${x}\"] }\n", i)
		}
	}
	src := []byte(b.String())
	whole, wd := hclsyntax.ParseConfig(src, "f.hcl", hcl.InitialPos)
	if wd.HasErrors() {
		t.Fatal(wd)
	}
	for _, chunk := range []int{1, 7, 100, 4096} {
		starts := itemStarts(src, chunk)
		if len(starts) < 3 {
			t.Fatalf("chunk %d: %d starts", chunk, len(starts))
		}
		var blocks hclsyntax.Blocks
		for i, s := range starts {
			end := len(src)
			if i+1 < len(starts) {
				end = starts[i+1].Byte
			}
			f, d := hclsyntax.ParseConfig(src[s.Byte:end], "f.hcl", s)
			if d.HasErrors() {
				t.Fatalf("chunk %d at %v: %v", chunk, s, d)
			}
			blocks = append(blocks, f.Body.(*hclsyntax.Body).Blocks...)
		}
		want := whole.Body.(*hclsyntax.Body).Blocks
		if len(blocks) != len(want) {
			t.Fatalf("chunk %d: %d blocks, want %d", chunk, len(blocks), len(want))
		}
		for i := range want {
			if blocks[i].Type != want[i].Type || blocks[i].Range() != want[i].Range() || fmt.Sprint(blocks[i].Labels) != fmt.Sprint(want[i].Labels) {
				t.Fatalf("chunk %d, block %d: %s %v %v, want %s %v %v", chunk, i, blocks[i].Type, blocks[i].Labels, blocks[i].Range(), want[i].Type, want[i].Labels, want[i].Range())
			}
		}
	}
	// Unterminated: parsed whole, so the error is hcl's for the file.
	if _, _, ok := parseInChunks(append([]byte(strings.Repeat("locals { a = 1 }\n", 20000)), "x = <<EOT\n"...), "f.hcl", func(*parsedChunk, hcl.Body) {}); ok {
		t.Fatal("a file ending in an open heredoc was parsed in chunks")
	}
}

// TestContextOfLargeFile (issue 43.7): the context a diagnostic shows ("in
// table ...") in a file over chunkBytes is what hcl's navigator of the
// whole file says, found by parsing one item: plan printed one warning
// with context and parsed the 10 MB configuration whole for it (413 MB of
// tokens, peak RSS 1.3 GB against validate's 0.6 GB).
func TestContextOfLargeFile(t *testing.T) {
	dir := t.TempDir()
	oneLineTables(t, dir, 20000) // 1.1 MB
	src, err := os.ReadFile(filepath.Join(dir, "main.icewright.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(src) <= chunkBytes {
		t.Fatalf("%d bytes: not over chunkBytes", len(src))
	}
	whole, diags := hclsyntax.ParseConfig(src, "f.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := whole.Nav.(contextNav)
	nav := fileForDiagnostics("f.hcl", src).Nav.(contextNav)
	step := len(src)/1000 + 1
	for o := 0; o <= len(src); o += step {
		if got, w := nav.ContextString(o), want.ContextString(o); got != w {
			t.Fatalf("context at byte %d: %q, want %q", o, got, w)
		}
	}
	// The first context costs about the file's size (its line starts), not
	// the 25 times of a whole parse; the others, one item's parse.
	fresh := fileForDiagnostics("f.hcl", src).Nav.(contextNav)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_ = fresh.ContextString(len(src) / 2)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*uint64(len(src)) {
		t.Errorf("the first context allocates %d bytes; the file is %d", n, len(src))
	}
	calls := 0
	runtime.ReadMemStats(&before)
	for o := 0; o <= len(src); o += step {
		_ = fresh.ContextString(o)
		calls++
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / uint64(calls); per > 64<<10 {
		t.Errorf("a context allocates %d bytes; the file is %d", per, len(src))
	}
}
