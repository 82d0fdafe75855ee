package store

import (
	"errors"
	iofs "io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/iceops/iceops/diff"
)

// NormPath is the key of a path for comparisons between references
// (expiry, compaction, quarantine bookkeeping): diff.NormalizePath, the one
// normaliser (docs/design.md §5.5 rule 8), without a policy's equal_schemes
// and equal_authorities and without a trailing slash. The orphan sweep
// uses the policy's maps.
func NormPath(p string) string {
	return strings.TrimSuffix(diff.NormalizePath(p, nil, nil), "/")
}

// LocalPath turns a file:// URL or a bare absolute path into an OS path.
func LocalPath(p string) (string, bool) {
	if strings.HasPrefix(p, "/") {
		return filepath.Clean(p), true
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

// IsNotExist reports a file that is not there, from the OS or a store.
func IsNotExist(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, os.ErrNotExist)
}
