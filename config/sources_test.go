package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSourceDigest: the digest changes with what Load reads (a file edited,
// added or removed, a var file edited) and with nothing else (a touch, a
// file Load ignores).
func TestSourceDigest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.icewright.hcl", "policy \"p\" {}\n")
	write("prod.vars", "retention = \"7d\"\n")
	vars := []string{"prod.vars"}
	digest := func() string {
		t.Helper()
		d, err := SourceDigest(dir, vars)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	seen := map[string]string{}
	expectNew := func(what string) {
		t.Helper()
		d := digest()
		if prev, ok := seen[d]; ok {
			t.Fatalf("%s: digest unchanged (same as after %s)", what, prev)
		}
		seen[d] = what
	}
	expectSame := func(what string, want string) {
		t.Helper()
		if d := digest(); d != want {
			t.Fatalf("%s changed the digest", what)
		}
	}
	expectNew("start")
	start := digest()

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "main.icewright.hcl"), later, later); err != nil {
		t.Fatal(err)
	}
	expectSame("a touch", start)
	write("notes.txt", "not configuration")
	write("old.icewright.hcl.bak", "policy \"q\" {}\n")
	if err := os.Mkdir(filepath.Join(dir, "sub.icewright.hcl"), 0o755); err != nil {
		t.Fatal(err)
	}
	expectSame("files Load does not read", start)

	write("main.icewright.hcl", "policy \"p\" { }\n")
	expectNew("an edit")
	write("extra.icewright.hcl", "")
	expectNew("a new empty file")
	if err := os.Remove(filepath.Join(dir, "extra.icewright.hcl")); err != nil {
		t.Fatal(err)
	}
	write("main.icewright.hcl", "policy \"p\" {}\n")
	expectSame("the first files again", start)
	write("prod.vars", "retention = \"8d\"\n")
	expectNew("a var file edit")

	if err := os.Remove(filepath.Join(dir, "prod.vars")); err != nil {
		t.Fatal(err)
	}
	if _, err := SourceDigest(dir, vars); err == nil {
		t.Fatal("a missing var file gave a digest")
	}
}
