package diff

import (
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
