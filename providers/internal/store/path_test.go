package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
)

// The decision rule of a deletion (DeletionName) on iceberg-go's own local
// IO: a file: URI with escapes loses its literal file only while no file
// has its decoded name; a location naming one file is removed as written.
func TestDeletionName(t *testing.T) {
	dir := t.TempDir()
	fsys, err := iceio.LoadFS(context.Background(), nil, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const escaped, decoded = "ts=2023-08-22T09%3A15%3A20", "ts=2023-08-22T09:15:20"
	cases := []struct {
		name             string
		literal, decoded bool // which names exist
		plain            bool // a location naming one file
		wantRemoved      bool // the literal file is gone after removing the returned name
	}{
		{name: "literal only (Java, PyIceberg)", literal: true, wantRemoved: true},
		{name: "decoded only (iceberg-go)", decoded: true},
		{name: "both", literal: true, decoded: true},
		{name: "neither"},
		{name: "plain", plain: true, literal: true, wantRemoved: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub := filepath.Join(dir, string(rune('a'+i)))
			lit := filepath.Join(sub, escaped, "f.parquet")
			dec := filepath.Join(sub, decoded, "f.parquet")
			loc := "file://" + lit
			if c.plain {
				lit = filepath.Join(sub, "p=1", "f.parquet")
				loc = "file://" + lit
			}
			if c.literal {
				write(lit)
			}
			if c.decoded {
				write(dec)
			}
			name, why, err := DeletionName(fsys, loc)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.plain && (name != loc || why != ""):
				t.Fatalf("plain location: %q, %q", name, why)
			case c.decoded && (name != "" || !strings.Contains(why, dec) || !strings.Contains(why, lit)):
				t.Fatalf("the decoded name exists: got %q, why %q; want nothing removed and both names said", name, why)
			case !c.decoded && name == "":
				t.Fatalf("nothing may be removed: %s", why)
			}
			if name != "" {
				if err := fsys.Remove(name); err != nil && !IsNotExist(err) {
					t.Fatal(err)
				}
			}
			_, lerr := os.Stat(lit)
			if gone := os.IsNotExist(lerr); c.literal && gone != c.wantRemoved {
				t.Errorf("literal file %s gone: %v, want %v", lit, gone, c.wantRemoved)
			}
			if c.decoded {
				if _, err := os.Stat(dec); err != nil {
					t.Errorf("decoded file %s: %v", dec, err)
				}
			}
		})
	}
}

// Storage tells apart what one iceberg-go IO serves: every local spelling
// is one storage, an object store's is its IO family and bucket.
func TestStorage(t *testing.T) {
	for _, c := range []struct{ p, want string }{
		{"/w/t/data/a.parquet", "file"},
		{"file:///w/t/a.parquet", "file"},
		{"file:/w/t/a.parquet", "file"},
		{"FILE://localhost/w/t", "file"},
		{"data/persistent/t/a.parquet", "file"},
		{"part:2026/a.parquet", "file"},
		{"s3://b/t/a.parquet", "s3://b"},
		{"s3a://b/t/a.parquet", "s3://b"},
		{"S3N://b/t", "s3://b"},
		{"s3://other/t/a.parquet", "s3://other"},
		{"gs://b/t", "gs://b"},
		{"abfss://c@acct.dfs.core.windows.net/t", "azure://c@acct.dfs.core.windows.net"},
		{"hdfs://nn:8020/t", "hdfs://nn:8020"},
	} {
		if got := Storage(c.p); got != c.want {
			t.Errorf("Storage(%q) = %q, want %q", c.p, got, c.want)
		}
	}
}
