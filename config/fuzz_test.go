package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Fuzz targets: run one per invocation, e.g.
//
//	go test ./config -run '^$' -fuzz '^FuzzLoad$' -fuzztime 60s -fuzzminimizetime 20x
//
// (the default minimisation budget, 60s per new input, stalls FuzzLoad on
// big configurations). Seeds are below and in testdata/fuzz.

func FuzzLoad(f *testing.F) {
	design, err := os.ReadFile(filepath.Join("testdata", "design.icewright.hcl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(design))
	f.Add(resolveSrc)
	f.Add(baseCatalog + `tables "lake.**" { exclude = ["lake.a.*"] }` + "\n" + `tables "lake.a.*" {}`)
	f.Add(baseCatalog + `policy "p" { sort_order = ["bucket(4, x) desc nulls first", "day(ts)"] }`)
	f.Add(`locals { a = local.b
 b = "1GiB" }
policy "p" { target_file_size = local.a }`)
	f.Add(`variable "v" { type = list(string)
 default = ["x"] }
policy "p" { remove_properties = var.v }`)
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cfg, diags := Load(dir, LoadOptions{Version: "0.1.0", Env: []string{"ICEWRIGHT_VAR_v=x", "A=b"}})
		// validate must stay interactive whatever the input; a slow path
		// (say, an automaton blow-up) is a bug too.
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("Load took %v", d)
		}
		if cfg == nil || cfg.Files == nil {
			t.Fatal("Load returned no Config")
		}
		for _, d := range diags {
			if d.Severity == hcl.DiagError && d.Subject == nil {
				t.Fatalf("error without a subject: %s: %s", d.Summary, d.Detail)
			}
			if d.Summary == "" {
				t.Fatalf("diagnostic without a summary: %+v", d)
			}
		}
		if diags.HasErrors() {
			return
		}
		// A valid configuration resolves every table it names, and explains it.
		for _, tb := range cfg.Tables {
			e, ok := cfg.Resolve(tb.Address)
			if !ok || e.MatchedBy != "table "+quote(tb.Address) {
				t.Fatalf("table %q does not resolve to its own block: %v %+v", tb.Address, ok, e)
			}
			if len(e.Explain()) == 0 {
				t.Fatal("empty explain")
			}
		}
		for _, s := range cfg.Selectors {
			// Valid selectors never overlap, so an address a selector matches
			// resolves to that selector unless a table block claims it.
			addr := strings.ReplaceAll(strings.ReplaceAll(s.Pattern, "**", "x.y"), "*", "z")
			if _, _, _, err := SplitAddress(addr); err != nil || !selectorMatches(s, addr) {
				continue
			}
			if e, ok := cfg.Resolve(addr); !ok {
				t.Fatalf("%q matches %s but is unmanaged", addr, s.Pattern)
			} else if !strings.HasPrefix(e.MatchedBy, "table ") && e.MatchedBy != "tables "+quote(s.Pattern) {
				t.Fatalf("%q resolved by %s, want tables %q", addr, e.MatchedBy, s.Pattern)
			}
		}
		if _, fdiags := Format([]byte(src), "main.icewright.hcl"); fdiags.HasErrors() {
			t.Fatalf("Format rejects a file Load accepted: %v", fdiags)
		}
	})
}

func quote(s string) string { return `"` + s + `"` }

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512MiB", "1GB", "64KiB", "1048576", "1.5GiB", "12 parsecs", "", "9223372036854775807", "0.1B", "1e3MiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", s, n)
		}
		back, err := ParseSize(FormatSizeExact(n))
		if err != nil || back != n {
			t.Fatalf("round trip of %q (%d): %d, %v", s, n, back, err)
		}
		_ = FormatSize(n)
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "90m", "36h", "1h30m", "5d", "2w", "1.5h", "0", "-1h", "5 days", "1w2d3h4m5s6ms7us8ns", "µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v, negative", s, d)
		}
		back, err := ParseDuration(FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("round trip of %q (%v) via %q: %v, %v", s, d, FormatDuration(d), back, err)
		}
	})
}

func FuzzParseSortField(f *testing.F) {
	for _, s := range []string{"col", "col desc", "event_ts desc nulls last", "bucket(16, user_id)", "truncate(4,name) asc nulls first", "day(ts)", "identity(a.b)", "bucket(", "x y z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sf, err := ParseSortField(s)
		if err != nil {
			return
		}
		back, err := ParseSortField(sf.String())
		if err != nil || back != sf {
			t.Fatalf("%q parsed to %+v, whose String %q parses to %+v, %v", s, sf, sf.String(), back, err)
		}
	})
}

// FuzzLoadNesting reaches deep nesting, which FuzzLoad's mutations rarely
// build: the input is a prefix, a run of one opening token repeated depth
// times, and a suffix. Load must answer with diagnostics, fast, never a
// stack overflow (issue 13.9).
func FuzzLoadNesting(f *testing.F) {
	f.Add(`policy "p" { properties = `, uint8(0), uint16(5000), ` }`)
	f.Add(`locals { x = "`, uint8(3), uint16(200), `" }`)
	f.Add(`locals { x = `, uint8(1), uint16(99), `1`)
	f.Add(`x = [`, uint8(2), uint16(101), `]`)
	opens := []string{"[", "(", "{a=", "${", "%{ if ", "[for x in ", `"${`}
	f.Fuzz(func(t *testing.T, prefix string, open uint8, depth uint16, suffix string) {
		src := prefix + strings.Repeat(opens[int(open)%len(opens)], int(depth)) + suffix
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cfg, _ := Load(dir, LoadOptions{Version: "0.1.0"})
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("Load took %v", d)
		}
		if cfg == nil {
			t.Fatal("Load returned no Config")
		}
		_, _ = Format([]byte(src), "main.icewright.hcl")
	})
}

// FuzzLoadLimits covers the block limit (issue 43.7) with the limit lowered
// to a size a fuzzer reaches: a prefix, then one item repeated n times.
// Over the limit, Load answers with the "Too many blocks" error at a block
// of the input and decodes nothing; under it, never with that error.
func FuzzLoadLimits(f *testing.F) {
	f.Add(baseCatalog, `table "lake.a.t" { target_file_size = "128MiB" }`+"\n", uint16(40), uint8(30))
	f.Add(``, `tables "lake.*.*" {}`+"\n", uint16(10), uint8(20))
	f.Add(`policy "p" {}`, "\n# only a comment\n", uint16(500), uint8(1))
	f.Add(``, `locals { x = 1 }`, uint16(3), uint8(2))
	f.Fuzz(func(t *testing.T, prefix, item string, n uint16, limit uint8) {
		defer func(m int) { maxBlocks = m }(maxBlocks)
		maxBlocks = int(limit)
		src := prefix + strings.Repeat(item, int(n%2000))
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cfg, diags := Load(dir, LoadOptions{Version: "0.1.0"})
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("Load took %v", d)
		}
		blocks := 0
		if checkInput([]byte(src), "") != nil {
			return // refused before parsing; FuzzLoadNesting covers it
		}
		if f, _ := hclsyntax.ParseConfig([]byte(src), "main.icewright.hcl", hcl.InitialPos); f != nil {
			blocks = len(f.Body.(*hclsyntax.Body).Blocks)
		}
		over := false
		for _, d := range diags {
			if d.Summary == "Too many blocks" {
				over = true
				if d.Subject == nil || d.Subject.Filename == "" || d.Subject.Start.Line < 1 {
					t.Fatalf("limit error without a place: %v", d.Subject)
				}
			}
		}
		// The limit counts the blocks of the top-level schema; blocks of an
		// unknown type are errors of their own and count too.
		if over && blocks <= int(limit) {
			t.Fatalf("Too many blocks with %d blocks, limit %d", blocks, limit)
		}
		if !over && blocks > int(limit) && !diags.HasErrors() {
			t.Fatalf("%d blocks, limit %d, no error", blocks, limit)
		}
		if over && (len(cfg.Tables) > 0 || len(cfg.Selectors) > 0) {
			t.Fatal("decoded past the limit")
		}
	})
}

// FuzzItemStarts: cutting a file where itemStarts says (here before every
// item, chunk 1) never changes what hcl parses. If the whole input parses
// without errors, every chunk does, with the whole parse's blocks and
// ranges; Load relies on this for files over chunkBytes, and otherwise
// falls back to the whole parse.
func FuzzItemStarts(f *testing.F) {
	f.Add("table \"a.b.c\" {}\nlocals {\n  h = <<-EOT\n  }\n  EOT\n}\n/* x\n}\n*/ x = 1\n")
	f.Add("a = \"${\"}\"}\"\n# }\nb = [\n1]\n")
	f.Add("x = <<EOT\r\nEOT\r\ny = 2\r\n")
	f.Fuzz(func(t *testing.T, src string) {
		if checkInput([]byte(src), "") != nil {
			return
		}
		whole, d := hclsyntax.ParseConfig([]byte(src), "f.hcl", hcl.InitialPos)
		if d.HasErrors() {
			return
		}
		starts := itemStarts([]byte(src), 1)
		var blocks hclsyntax.Blocks
		var attrs int
		for i, s := range starts {
			end := len(src)
			if i+1 < len(starts) {
				end = starts[i+1].Byte
			}
			c, d := hclsyntax.ParseConfig([]byte(src[s.Byte:end]), "f.hcl", s)
			if d.HasErrors() {
				t.Fatalf("chunk %d at %v (%q) has errors the whole input has not: %v", i, s, src[s.Byte:end], d)
			}
			blocks = append(blocks, c.Body.(*hclsyntax.Body).Blocks...)
			attrs += len(c.Body.(*hclsyntax.Body).Attributes)
		}
		want := whole.Body.(*hclsyntax.Body)
		if len(blocks) != len(want.Blocks) || attrs != len(want.Attributes) {
			t.Fatalf("%d blocks and %d attributes, want %d and %d", len(blocks), attrs, len(want.Blocks), len(want.Attributes))
		}
		for i := range blocks {
			if blocks[i].Range() != want.Blocks[i].Range() {
				t.Fatalf("block %d at %v, want %v", i, blocks[i].Range(), want.Blocks[i].Range())
			}
		}
	})
}

// FuzzLoadChunked: a file Load parses a run of items at a time (chunkBytes
// lowered to a few bytes, so small inputs are) reads as the same file
// parsed whole (issue 43.7). Whatever the input, no panic and every error
// at a file:line:col; an input is an error both ways or neither; one that
// loads without errors gives the same configuration and the same
// diagnostics, each with the same context ("in table ...").
func FuzzLoadChunked(f *testing.F) {
	f.Add(resolveSrc+`table "lake.a.t" { target_file_size = "128MiB" }
table "lake.a.u" {
  policy = policy.leaf
  compaction {
    min_input_files = 3
  }
}
`, uint8(1))
	f.Add(baseCatalog+`variable "size" {
  default = "64MiB"
}
locals {
  n = 4
}
table "lake.a.t" { target_file_size = var.size }
table "lake.a.u" { target_file_size = "1GiB" }
table "lake.a.v" {
  compaction {
    min_input_files = local.n
  }
}
`, uint8(20))
	f.Add(baseCatalog+`table "lake.a.t" {}
table "lake" {}
table "lake.a.t" { target_file_size = var.nope }
`, uint8(2))
	f.Add(baseCatalog+`table "lake.a.t" {
  properties = {
    "x" = <<-EOT
    }
    table "lake.b.c" {
    EOT
    y = "${"}"}"
  }
}
# table "lake.c.d" {
/* } */ table "lake.e.f" { target_file_size = format("%dMiB", 64) }
table "lake.g.h" { target_file_size = "1KiB" }
`, uint8(7))
	f.Add(baseCatalog+`table "lake.a.t" { target_file_size = env("NOPE") }
table "lake.a.u" { unknown = 1 }
x = 1
table "lake.a.v" {
`, uint8(3))
	// A property holding a secret declared further down is masked.
	f.Add(`table "pg.a.t" {
  properties = { "comment" = "pw is s3cret-pw" }
}
table "pg.a.u" { target_file_size = "128MiB" }
catalog "pg" {
  type = "sql"
  uri  = "postgres://u:s3cret-pw@db.example.com/cat"
}
`, uint8(5))
	f.Fuzz(func(t *testing.T, src string, chunk uint8) {
		dir := t.TempDir()
		path := filepath.Join(dir, "main.icewright.hcl")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		opts := LoadOptions{Version: "0.1.0", Env: []string{"ICEWRIGHT_VAR_v=x"}}
		whole, wdiags := Load(dir, opts)
		// The context a diagnostic at each offset would name, from hcl's
		// navigator of the whole file (before chunkBytes is lowered).
		step := max(1, len(src)/100)
		contexts := func(c *Config) []string {
			var out []string
			for o := 0; o <= len(src); o += step {
				out = append(out, c.Files[path].Nav.(interface{ ContextString(int) string }).ContextString(o))
			}
			return out
		}
		var wcontexts []string
		if !wdiags.HasErrors() {
			wcontexts = contexts(whole)
		}
		defer func(n int) { chunkBytes = n }(chunkBytes)
		chunkBytes = 1 + int(chunk%64)
		start := time.Now()
		cfg, diags := Load(dir, opts)
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("Load took %v", d)
		}
		for _, d := range diags {
			if s := d.Subject; d.Severity == hcl.DiagError && (s == nil || s.Filename == "" || s.Start.Line < 1 || s.Start.Column < 1) {
				t.Fatalf("error without a file:line:col: %s: %s (%v)", d.Summary, d.Detail, s)
			}
		}
		if wdiags.HasErrors() != diags.HasErrors() {
			t.Fatalf("errors parsed whole: %v; in chunks: %v", diagLines(wdiags), diagLines(diags))
		}
		if wdiags.HasErrors() {
			return
		}
		full := func(diags hcl.Diagnostics) string {
			var b strings.Builder
			for _, d := range diags {
				fmt.Fprintf(&b, "%v %s: %s %v %v\n", d.Severity, d.Summary, d.Detail, d.Subject, d.Context)
			}
			return b.String()
		}
		if w, c := full(wdiags), full(diags); w != c {
			t.Fatalf("diagnostics parsed whole:\n%s\nin chunks:\n%s", w, c)
		}
		if c := contexts(cfg); !slices.Equal(wcontexts, c) {
			t.Fatalf("contexts at every %d bytes parsed whole:\n%q\nin chunks:\n%q", step, wcontexts, c)
		}
		a, b := *whole, *cfg
		a.Files, b.Files = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("configurations differ:\nwhole  %+v\nchunks %+v", a, b)
		}
	})
}
