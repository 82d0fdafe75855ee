package diff

import (
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestNormalizePath(t *testing.T) {
	schemes := map[string]string{"gs,gcs": "gs"}
	auths := map[string]string{"bucket.s3.amazonaws.com": "bucket"}
	tests := []struct{ in, want string }{
		{"s3://bucket/t/data/a.parquet", "s3://bucket/t/data/a.parquet"},
		{"s3a://bucket/t/data/a.parquet", "s3://bucket/t/data/a.parquet"},
		{"S3N://bucket/t/data/a.parquet", "s3://bucket/t/data/a.parquet"},
		{"s3://bucket.s3.amazonaws.com/t/a", "s3://bucket/t/a"},
		{"gcs://b/t/a", "gs://b/t/a"},
		{"file:/x/t/a", "file:///x/t/a"},
		{"file:///x/t/a", "file:///x/t/a"},
		{"file://localhost/x/t/a", "file:///x/t/a"},
		{"/x/t/a", "file:///x/t/a"},
		{"/x/t/../t/./data//a", "file:///x/t/data/a"},
		{"s3://b/t/data/../metadata/m.json", "s3://b/t/metadata/m.json"},
		{"s3://b/t/", "s3://b/t/"},
		{"s3://b", "s3://b/"},
		{"rel/dir/../a", "rel/a"},
		{"abfs://container@acct.dfs.core.windows.net/t/a", "abfs://container@acct.dfs.core.windows.net/t/a"},
	}
	for _, tt := range tests {
		if got := NormalizePath(tt.in, schemes, auths); got != tt.want {
			t.Errorf("NormalizePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The three spellings of one local file agree.
	a, b, c := NormalizePath("file:/x", nil, nil), NormalizePath("file:///x", nil, nil), NormalizePath("/x", nil, nil)
	if a != b || b != c {
		t.Fatalf("local spellings differ: %q %q %q", a, b, c)
	}
}

// isCleanAbs is only a shortcut: wherever it says a path is clean, the
// slow path gives the same answer.
func FuzzCleanAbsShortcut(f *testing.F) {
	for _, s := range []string{"/", "/a/b", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..", "/a/b/", "/.a/..b/...", "//", "/a/.b.", "a/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			return
		}
		c := path.Clean("/" + p)
		if strings.HasSuffix(p, "/") && c != "/" {
			c += "/"
		}
		if isCleanAbs(p) && c != p {
			t.Fatalf("isCleanAbs(%q) but cleans to %q", p, c)
		}
		if got := cleanAbs(p); got != c {
			t.Fatalf("cleanAbs(%q) = %q, want %q", p, got, c)
		}
	})
}

// Rule 8 with escaped names (issue 13.5): a file: URI is decoded as
// iceberg-go's LocalFS decodes it, a bare path and an object key are
// literal, and the key is stable under normalising it again.
func TestNormalizePathEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		// iceberg-go writes partition values url.QueryEscape'd into a file:
		// URI; LocalFS decodes them, so the file on disk has the raw value.
		{"file:///w/t/data/p=a%2Fb/x.parquet", "file:///w/t/data/p=a/b/x.parquet"},
		{"/w/t/data/p=a/b/x.parquet", "file:///w/t/data/p=a/b/x.parquet"},
		{"file:///w/t/data/p=50%25/x.parquet", "file:///w/t/data/p=50%25/x.parquet"},
		{"/w/t/data/p=50%/x.parquet", "file:///w/t/data/p=50%25/x.parquet"},
		{"file:///w/t/data/p=a+b/x.parquet", "file:///w/t/data/p=a+b/x.parquet"},
		{"file:///w/t/data/p=%C3%A9%E2%9C%93/x.parquet", "file:///w/t/data/p=é✓/x.parquet"},
		{"/w/t/data/p=é✓/x.parquet", "file:///w/t/data/p=é✓/x.parquet"},
		{"file:///w/t/data/p=x%3Dy/x.parquet", "file:///w/t/data/p=x=y/x.parquet"},
		{"file:///w/t/data/p=a%20b/x.parquet", "file:///w/t/data/p=a b/x.parquet"},
		// Two tables named pct%41 and pctA: through a URI they are one
		// directory, as bare paths two.
		{"file:///w/db/pct%41/data/x.parquet", "file:///w/db/pctA/data/x.parquet"},
		{"/w/db/pct%41/data/x.parquet", "file:///w/db/pct%2541/data/x.parquet"},
		// What a URI parser reads as query or fragment is not the file's
		// name: literal ones are escaped in the key.
		{"/w/t/a?b#c.parquet", "file:///w/t/a%3Fb%23c.parquet"},
		{"file:///w/t/a?b.parquet", "file:///w/t/a"},
		// Not a valid escape: not openable as a URI; kept literal.
		{"file:///w/t/50%/x", "file:///w/t/50%25/x"},
		// Object keys are opaque.
		{"s3://b/t/data/p=a%2Fb/x.parquet", "s3://b/t/data/p=a%2Fb/x.parquet"},
		{"s3a://b/t/p=50%/x", "s3://b/t/p=50%/x"},
		{"s3://b/t/p=a b/é", "s3://b/t/p=a b/é"},
	}
	for _, tt := range tests {
		got := NormalizePath(tt.in, nil, nil)
		if got != tt.want {
			t.Errorf("NormalizePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := NormalizePath(got, nil, nil); again != got {
			t.Errorf("NormalizePath(%q) = %q, normalised again %q", tt.in, got, again)
		}
	}
}

// The decoding of file: URIs is net/url's (which diff may not import), and
// a key names the same local file as the location it came from.
func FuzzNormalizeFileURI(f *testing.F) {
	for _, s := range []string{"/a/p=50%25", "/a/%2F", "/a/%zz", "/a/é", "/a/b?c", "/a/b#c", "/a/%41", "/a/b%", "/a/%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			return
		}
		key := NormalizePath("file://"+p, nil, nil)
		if again := NormalizePath(key, nil, nil); again != key {
			t.Fatalf("not stable: %q -> %q -> %q", p, key, again)
		}
		u, err := url.Parse("file://" + p)
		if err != nil || u.Host != "" {
			return // not a location LocalFS can open
		}
		if want := NormalizePath(u.Path, nil, nil); want != key {
			t.Fatalf("file://%s: key %q, but LocalFS opens %q (key %q)", p, key, u.Path, want)
		}
	})
}

// A file: URI whose path changes when decoded names two local files: the
// decoded one iceberg-go opens (NormalizePath) and the literal one the
// other engines open (LiteralKey). Every other location names one.
func TestLiteralKey(t *testing.T) {
	tests := []struct {
		in, want string // want "" when the location names one file
	}{
		// Java's and PyIceberg's escaped identity timestamp directory.
		{"file:///w/t/data/ts=2023-08-22T09%3A15%3A20/f.parquet", "file:///w/t/data/ts=2023-08-22T09%253A15%253A20/f.parquet"},
		{"file:/w/t/data/p=a%2Fb/f.parquet", "file:///w/t/data/p=a%252Fb/f.parquet"},
		{"FILE://localhost/w/t/p=%C5%BC/f", "file:///w/t/p=%25C5%25BC/f"},
		{"file:///w/t/a?b.parquet", "file:///w/t/a%3Fb.parquet"},
		{"file:///w/t/a#b.parquet", "file:///w/t/a%23b.parquet"},
		// Nothing to decode, or nothing that decodes: one name.
		{"file:///w/t/data/p=a+b/f.parquet", ""},
		{"file:///w/t/data/p=50%/f.parquet", ""},
		{"file:///w/t/data/f.parquet", ""},
		// A bare path is literal to every reader, iceberg-go's too.
		{"/w/t/data/ts=2023-08-22T09%3A15%3A20/f.parquet", ""},
		// Object keys are opaque to every reader.
		{"s3://b/t/data/ts=2023-08-22T09%3A15%3A20/f.parquet", ""},
		{"C:/x%41", ""},
	}
	for _, tt := range tests {
		got, ok := LiteralKey(tt.in, nil, nil)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("LiteralKey(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
			continue
		}
		if !ok {
			continue
		}
		if dec := NormalizePath(tt.in, nil, nil); dec == got {
			t.Errorf("LiteralKey(%q) = %q is the decoded key too", tt.in, got)
		}
		if again := NormalizePath(got, nil, nil); again != got {
			t.Errorf("LiteralKey(%q) = %q, normalised %q", tt.in, got, again)
		}
	}
	// The literal key is the key of the file as a listing names it.
	in := "file:///w/t/data/ts=2023-08-22T09%3A15%3A20/f.parquet"
	lit, _ := LiteralKey(in, nil, nil)
	if listed := NormalizePath("/w/t/data/ts=2023-08-22T09%3A15%3A20/f.parquet", nil, nil); listed != lit {
		t.Errorf("literal key %q, listed file's key %q", lit, listed)
	}
	// A policy's maps apply as NormalizePath applies them.
	if got, ok := LiteralKey("local://h1/w/p=%41", map[string]string{"local": "file"}, map[string]string{"h1": ""}); !ok || got != "file:///w/p=%2541" {
		t.Errorf("mapped: %q, %v", got, ok)
	}
}

// Wherever a file: URI names two files, the literal key names the path as
// written and differs from the decoded key; elsewhere it names one.
func FuzzLiteralKey(f *testing.F) {
	for _, s := range []string{"/a/p=50%25", "/a/%2F", "/a/%zz", "/a/é", "/a/b?c", "/a/b#c", "/a/%41", "/a/b%", "/a/./%2E%2E/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			return
		}
		lit, ok := LiteralKey("file://"+p, nil, nil)
		dec := NormalizePath("file://"+p, nil, nil)
		bare := NormalizePath(p, nil, nil)
		switch {
		case ok && lit == dec:
			t.Fatalf("file://%s: literal key %q equals the decoded key", p, lit)
		case ok && lit != bare:
			t.Fatalf("file://%s: literal key %q, but the path as written is %q", p, lit, bare)
		case !ok && dec != bare:
			t.Fatalf("file://%s names one file, but decoded %q and literal %q differ", p, dec, bare)
		}
	})
}
