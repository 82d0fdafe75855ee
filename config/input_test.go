package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// loadWithin runs Load and fails the test if it does not return in time (a
// FIFO used to hang it for ever).
func loadWithin(t *testing.T, dir string, opts LoadOptions) hcl.Diagnostics {
	t.Helper()
	done := make(chan hcl.Diagnostics, 1)
	go func() {
		_, diags := Load(dir, opts)
		done <- diags
	}()
	select {
	case d := <-done:
		return d
	case <-time.After(30 * time.Second):
		t.Fatal("Load did not return")
		return nil
	}
}

func wantError(t *testing.T, diags hcl.Diagnostics, summary, detail string) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Summary == summary && strings.Contains(d.Detail, detail) {
			return
		}
	}
	t.Fatalf("want error %q containing %q, got %v", summary, detail, diags)
}

// TestLoadReadsOnlyRegularFiles (issue 13.9): a configuration or var file
// that is a link to /dev/zero, a FIFO or a directory is refused at once.
func TestLoadReadsOnlyRegularFiles(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		make       func(p string) error
	}{
		{"dev_zero", "a device", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"fifo", "a named pipe", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"directory", "a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(filepath.Join(dir, "main.icewright.hcl")); err != nil {
				t.Fatal(err)
			}
			if tc.name == "directory" {
				// A directory named like a configuration is skipped by the
				// directory listing; as a var file it is refused.
				if err := os.WriteFile(filepath.Join(dir, "ok.icewright.hcl"), []byte(`variable "v" { default = "x" }`), 0o644); err != nil {
					t.Fatal(err)
				}
				wantError(t, loadWithin(t, dir, LoadOptions{VarFiles: []string{"main.icewright.hcl"}}), "Cannot read variables file", tc.kind)
				return
			}
			wantError(t, loadWithin(t, dir, LoadOptions{}), "Cannot read configuration file", tc.kind)

			// The same file as a -var-file.
			vdir := t.TempDir()
			if err := os.WriteFile(filepath.Join(vdir, "main.icewright.hcl"), []byte(`variable "v" { default = "x" }`), 0o644); err != nil {
				t.Fatal(err)
			}
			wantError(t, loadWithin(t, vdir, LoadOptions{VarFiles: []string{filepath.Join(dir, "main.icewright.hcl")}}), "Cannot read variables file", tc.kind)
		})
	}
}

// TestLoadRefusesOversizeFiles: above the limit the error says so, without
// reading the file (it is sparse here: 1 GiB of nothing).
func TestLoadRefusesOversizeFiles(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "main.icewright.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	wantError(t, loadWithin(t, dir, LoadOptions{}), "Cannot read configuration file", "larger than 16 MiB")
	if _, err := ReadRegularFile(filepath.Join(dir, "main.icewright.hcl"), MaxPlanFileBytes); err == nil || !strings.Contains(err.Error(), "larger than 512 MiB") {
		t.Fatalf("a 1 GiB plan: %v", err)
	}
}

// TestDeepNestingIsAnError: 400 KB of "[" overflowed the Go stack inside
// hcl's parser; now it is a diagnostic with a position, in configuration
// files, var files and fmt alike.
func TestDeepNestingIsAnError(t *testing.T) {
	for _, src := range []string{
		`policy "p" { properties = ` + strings.Repeat("[", 400<<10) + " }\n",
		`policy "p" { properties = ` + strings.Repeat("{a=", 400<<10) + " }\n",
		`locals { x = "` + strings.Repeat("${", 400<<10) + "\" }\n",
		`locals { x = ` + strings.Repeat("(", MaxNesting+1) + "1" + strings.Repeat(")", MaxNesting+1) + " }\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		diags := loadWithin(t, dir, LoadOptions{})
		wantError(t, diags, "Configuration nested too deeply", "more than 100 levels")
		for _, d := range diags {
			if d.Summary == "Configuration nested too deeply" && (d.Subject == nil || d.Subject.Start.Line != 1) {
				t.Fatalf("no position: %+v", d)
			}
		}
		if _, d := Format([]byte(src), "x.icewright.hcl"); !d.HasErrors() {
			t.Fatal("Format accepted deep nesting")
		}
		vdir := t.TempDir()
		if err := os.WriteFile(filepath.Join(vdir, "main.icewright.hcl"), []byte(`variable "v" { default = "x" }`), 0o644); err != nil {
			t.Fatal(err)
		}
		vf := filepath.Join(dir, "vars.hcl")
		if err := os.WriteFile(vf, []byte("v = "+src[strings.Index(src, "=")+1:]), 0o644); err != nil {
			t.Fatal(err)
		}
		wantError(t, loadWithin(t, vdir, LoadOptions{VarFiles: []string{vf}}), "Configuration nested too deeply", "levels")
	}
}

// TestInvalidEncodingIsAnError: a file that is not UTF-8 is refused with
// the position of its first bad byte, also where hcl's own parse finds no
// error ("A=\xec\n0", found by FuzzItemStarts: its chunks then read
// differently from the whole), and whether it is parsed whole or in chunks.
func TestInvalidEncodingIsAnError(t *testing.T) {
	for _, src := range []string{"A=\xec\n0", "catalog \"c\" {\n  type = \"sql\" # \xff\n}\n"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		diags := loadWithin(t, dir, LoadOptions{})
		wantError(t, diags, "Invalid character encoding", "UTF-8")
		d := checkInput([]byte(src), "f")
		bad := strings.IndexFunc(src, func(r rune) bool { return r == utf8.RuneError })
		if d == nil || d.Subject.Start.Byte != bad {
			t.Fatalf("%q: %+v, want the first invalid byte", src, d)
		}
		if _, d := Format([]byte(src), "x.icewright.hcl"); !d.HasErrors() {
			t.Fatalf("Format accepted %q", src)
		}
	}
}

// TestNestingCountsOnlyCode: brackets in strings and comments do not count;
// interpolations do, and the string resumes after them.
func TestNestingCountsOnlyCode(t *testing.T) {
	deep := strings.Repeat("[", 3*MaxNesting)
	for _, src := range []string{
		`x = "` + deep + `"`,
		`x = "a\"` + deep + `"`,
		"# " + deep + "\nx = 1",
		"// " + deep + "\nx = 1",
		"/* " + deep + " */ x = 1",
		`x = "${"[" }` + deep + `"`,
		strings.Repeat(`x = ["${a}", [1], {b = "c"}]`+"\n", 10*MaxNesting),
		`x = ` + strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting),
	} {
		if d := checkInput([]byte(src), "f"); d != nil {
			t.Errorf("%.60q: %s", src, d.Detail)
		}
	}
}

// TestSelectorPairsAreNotAllPairs: the overlap check compares selectors
// only where their literal prefixes allow an overlap, so thousands of
// selectors on distinct namespaces cost thousands of comparisons, not
// millions (a 10 MB configuration took 6 minutes to validate).
func TestSelectorPairsAreNotAllPairs(t *testing.T) {
	var sel []*TablesBlock
	for i := range 5000 {
		sel = append(sel, &TablesBlock{Pattern: fmt.Sprintf("lake.ns%d.*", i)})
	}
	if n := len(selectorPairs(sel)); n != 0 {
		t.Fatalf("%d pairs among disjoint selectors", n)
	}
	sel = append(sel, &TablesBlock{Pattern: "lake.*.t"}, &TablesBlock{Pattern: "**"}, &TablesBlock{Pattern: "lake.ns7.*x"})
	pairs := selectorPairs(sel)
	// lake.*.t and ** against everything before them and each other, and
	// lake.ns7.*x against lake.ns7.*, lake.*.t and **.
	if want := 5000 + 5001 + 3; len(pairs) != want {
		t.Fatalf("%d pairs, want %d", len(pairs), want)
	}
	for i := 1; i < len(pairs); i++ {
		a, b := pairs[i-1], pairs[i]
		if a[0] > b[0] || (a[0] == b[0] && a[1] >= b[1]) || b[0] >= b[1] {
			t.Fatalf("pairs out of order: %v %v", a, b)
		}
	}
}

// TestValidateIsLinear (issue 13.9): many table blocks and selectors load
// in time proportional to their number. The bound is loose (a loaded CI
// machine) but far below what the quadratic checks took.
func TestValidateIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1 MB configuration")
	}
	var b strings.Builder
	b.WriteString(baseCatalog)
	b.WriteString("policy \"p\" {\n  target_file_size = \"512MiB\"\n}\n")
	for i := range 8000 {
		fmt.Fprintf(&b, "table \"lake.ns%d.t%d\" {\n  policy = policy.p\n}\n", i%50, i)
		fmt.Fprintf(&b, "tables \"lake.sel%d.*\" {\n  policy = policy.p\n}\n", i)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, diags := Load(dir, LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Fatalf("loading %d KB took %v", b.Len()>>10, d)
	}
	t.Logf("%d KB in %v", b.Len()>>10, time.Since(start))
}
