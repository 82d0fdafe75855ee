package orphans

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// walkLocal must list exactly what filepath.WalkDir (which the scan used
// before) lists: every regular file, no symlink followed, quarantine and
// special files left out, on a tree deep and wide enough for its workers
// to share directories.
func TestWalkLocalMatchesWalkDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeAt := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for d := range 40 {
		for f := range 60 {
			writeAt(fmt.Sprintf("data/p=%02d/sub%d/%04d.parquet", d, d%3, f))
		}
	}
	writeAt("metadata/v1.metadata.json")
	writeAt(QuarantineDir + "/run-1/data/x.parquet")
	writeAt("data/p=01/" + QuarantineDir + "/y.parquet") // skipped at any depth
	if err := os.WriteFile(filepath.Join(outside, "secret.parquet"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "data", "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.parquet"), filepath.Join(root, "data", "p=03", "link.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "data", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	var want, wantLinks []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			wantLinks = append(wantLinks, p)
		case d.IsDir() && d.Name() == QuarantineDir:
			return fs.SkipDir
		case d.Type().IsRegular():
			want = append(want, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got, gotLinks []string
	err = walkLocal(context.Background(), root, func(f localFile) error {
		info, err := os.Lstat(f.path)
		if err != nil || info.Size() != f.size || info.ModTime().UnixMilli() != f.mtime {
			t.Errorf("%s: size %d mtime %d, lstat says %v %v", f.path, f.size, f.mtime, info, err)
		}
		got = append(got, f.path)
		return nil
	}, func(p string) { gotLinks = append(gotLinks, p) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(gotLinks)
	slices.Sort(want)
	slices.Sort(wantLinks)
	if len(want) != 40*60+1 {
		t.Fatalf("reference listing has %d files", len(want))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walkLocal listed %d files, WalkDir %d", len(got), len(want))
	}
	if !slices.Equal(gotLinks, wantLinks) || len(gotLinks) != 2 {
		t.Fatalf("symlinks %v, want %v", gotLinks, wantLinks)
	}

	// A missing root is empty; a root that is a symlink is reported, not followed.
	n := 0
	if err := walkLocal(context.Background(), filepath.Join(root, "nope"), func(localFile) error { n++; return nil }, func(string) { n++ }, nil); err != nil || n != 0 {
		t.Fatalf("missing root: %d entries, %v", n, err)
	}
	var links []string
	if err := walkLocal(context.Background(), filepath.Join(root, "data", "linkdir"), func(localFile) error { n++; return nil }, func(p string) { links = append(links, p) }, nil); err != nil || n != 0 || len(links) != 1 {
		t.Fatalf("symlinked root: %d files, links %v, %v", n, links, err)
	}
}

// Any failure while listing fails the listing: an emit error, a
// cancelled context.
func TestWalkLocalFailsWhole(t *testing.T) {
	root := t.TempDir()
	for d := range 20 {
		dir := filepath.Join(root, fmt.Sprint(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 50 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(f)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	boom := errors.New("boom")
	n := 0
	err := walkLocal(context.Background(), root, func(localFile) error {
		if n++; n == 300 {
			return boom
		}
		return nil
	}, func(string) {}, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("emit error: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = walkLocal(ctx, root, func(localFile) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	}, func(string) {}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v after %d files", err, n)
	}

}

// The staging rule on its own: hidden directories are left, except the
// partition directories of a field of any spec named "_..." or "...", and
// a directory that is, or holds, a write path; the rule asks only about
// directories, never the file's own name.
func TestStagingRule(t *testing.T) {
	md, err := table.ParseMetadataString(`{
  "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "s3://b/t", "last-sequence-number": 0, "last-updated-ms": 1, "last-column-id": 2,
  "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "a", "required": false, "type": "int"},
    {"id": 2, "name": "b", "required": false, "type": "string"}]}],
  "default-spec-id": 1,
  "partition-specs": [
    {"spec-id": 0, "fields": [{"name": "_a", "transform": "identity", "source-id": 1, "field-id": 1000}]},
    {"spec-id": 1, "fields": [{"name": ".b_bucket", "transform": "bucket[4]", "source-id": 2, "field-id": 1001}, {"name": "a", "transform": "identity", "source-id": 1, "field-id": 1002}]}],
  "last-partition-id": 1002,
  "properties": {"write.data.path": "s3://b/t/_data"},
  "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}]
}`)
	if err != nil {
		t.Fatal(err)
	}
	rule := newStagingRule(md, orphanNorm(nil, map[string]string{}))
	for key, want := range map[string]string{
		"s3://b/t/data/_a=1/x.parquet":                          "", // spec 0's field
		"s3://b/t/data/.b_bucket=3/a=1/x.parquet":               "", // spec 1's field
		"s3://b/t/data/_a=1/_temporary/0/x.parquet":             "s3://b/t/data/_a=1/_temporary",
		"s3://b/t/data/_temporary/0/_temporary/a/x.parquet":     "s3://b/t/data/_temporary",
		"s3://b/t/data/.hive-staging_hive_1/-ext-1/000000_0":    "s3://b/t/data/.hive-staging_hive_1",
		"s3://b/t/data/_ab=1/x.parquet":                         "s3://b/t/data/_ab=1", // not "_a="
		"s3://b/t/_data/x.parquet":                              "",                    // the write path
		"s3://b/t/.icewright-quarantine/r/data/x.parquet":       "s3://b/t/.icewright-quarantine",
		"s3://b/t/data/_SUCCESS":                                "", // a file, not a directory
		"s3://b/t/data/.x.parquet.crc":                          "",
		"s3://b/other/_temporary/x.parquet":                     "", // outside every root
		"s3://b/t/metadata/snap-1.avro":                         "",
		"s3://b/t/data/a=1/_temporary/0/x.parquet":              "s3://b/t/data/a=1/_temporary",
		"s3://b/t/data/a=1/.spark-staging-7c/part-0.parquet":    "s3://b/t/data/a=1/.spark-staging-7c",
		"s3://b/t/data/_a=1/.b_bucket=2/_c=1/x.parquet":         "s3://b/t/data/_a=1/.b_bucket=2/_c=1",
		"s3://b/t/data/_temporary/0/_a=1/part-00000.parquet":    "s3://b/t/data/_temporary",
		"s3://b/t/_data/_temporary/0/part-00000.parquet":        "s3://b/t/_data/_temporary",
		"s3://b/t/data/sub/.hidden/deeper/part-00000.parquet":   "s3://b/t/data/sub/.hidden",
		"s3://b/t/data/_a=1/.b_bucket=2/part-00000.parquet":     "",
		"s3://b/t/data/_a=1/.b_bucket=2/_c=1/part-0.parquet":    "s3://b/t/data/_a=1/.b_bucket=2/_c=1",
		"s3://b/t/data/_a=/x.parquet":                           "",
		"s3://b/t/data/_a/x.parquet":                            "s3://b/t/data/_a",
		"s3://b/t/data/%2E/x.parquet":                           "",
		"s3://b/t/data/_a=1/.b_bucket=2/a=1/part-00000.parquet": "",
	} {
		if got := rule.stagingDir(key); got != want {
			t.Errorf("stagingDir(%s) = %q, want %q", key, got, want)
		}
	}
}
