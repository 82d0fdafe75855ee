package testkit

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// Policy is the tests' policy of the table at address: config's default
// target and a compaction block (observation keeps candidate sizes and
// paths only for a policy that compacts).
func Policy(address string) *config.Effective {
	parts, err := config.SplitLevels(address)
	if err != nil {
		panic(err)
	}
	return &config.Effective{
		Address:   address,
		Catalog:   parts[0],
		Namespace: parts[1 : len(parts)-1],
		Table:     parts[len(parts)-1],
		PolicyBody: config.PolicyBody{
			TargetFileSize: config.Setting[int64]{Value: config.DefaultTargetFileSize, Set: true},
			Compaction:     config.CompactionPolicy{Declared: true},
		},
	}
}

// OrphanPolicy is Policy with an orphan_files block: files older than
// 72h, the default ratio guard, prefix mismatches an error.
func OrphanPolicy(address string) *config.Effective {
	pol := Policy(address)
	pol.OrphanFiles = config.OrphanPolicy{
		Declared:         true,
		OlderThan:        config.Setting[time.Duration]{Value: 72 * time.Hour, Set: true},
		MaxOrphanRatio:   config.Setting[float64]{Value: 0.25},
		MinFilesForRatio: config.Setting[int]{Value: 100},
		PrefixMismatch:   config.Setting[string]{Value: "error"},
	}
	return pol
}

// CandidatePaths are the paths of a scan's orphan candidates.
func CandidatePaths(scan *diff.OrphanScan) []string {
	var out []string
	for _, f := range scan.Candidates {
		out = append(out, f.Path)
	}
	return out
}

// WriteFileAt writes size zero bytes at p (directories created) with
// mtime.
func WriteFileAt(t testing.TB, p string, size int, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// CopyFileAt copies src to dst (directories created) with mtime: a file
// staged where another table will take it in (add_files).
func CopyFileAt(t testing.TB, src, dst string, mtime time.Time) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dst, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}
