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
	}, func(p string) { gotLinks = append(gotLinks, p) })
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
	if err := walkLocal(context.Background(), filepath.Join(root, "nope"), func(localFile) error { n++; return nil }, func(string) { n++ }); err != nil || n != 0 {
		t.Fatalf("missing root: %d entries, %v", n, err)
	}
	var links []string
	if err := walkLocal(context.Background(), filepath.Join(root, "data", "linkdir"), func(localFile) error { n++; return nil }, func(p string) { links = append(links, p) }); err != nil || n != 0 || len(links) != 1 {
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
	}, func(string) {})
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
	}, func(string) {})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v after %d files", err, n)
	}

}
