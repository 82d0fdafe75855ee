package store

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/icewright/icewright/diff"
)

// NormPath is the key of a path for comparisons between references
// (expiry, compaction, quarantine bookkeeping): diff.NormalizePath, the one
// normaliser (docs/design.md §5.5 rule 8), without a policy's equal_schemes
// and equal_authorities and without a trailing slash. The orphan sweep
// uses the policy's maps.
func NormPath(p string) string {
	return strings.TrimSuffix(diff.NormalizePath(p, nil, nil), "/")
}

// LiteralKey is diff.LiteralKey, the key of the literal name of a file:
// URI that names two local files, without a policy's maps and without a
// trailing slash, as NormPath spells keys; ok is false for a location
// that names one file.
func LiteralKey(p string) (string, bool) {
	k, ok := diff.LiteralKey(p, nil, nil)
	return strings.TrimSuffix(k, "/"), ok
}

// DeletionName is what a deletion of the table's file at location p, as
// the metadata writes it, may remove (docs/design.md §5.5 rule 8): a
// location iceberg-go's IO opens as that name, or "" with why when neither
// name may go.
//
// A location that names one file is removed as it is. A file: URI that
// names two (LiteralKey) is the decoded name to iceberg-go and the literal
// name to Java, PyIceberg, Spark, Trino and DuckDB, and the table's writer
// decided which one holds the file. Only the literal name is ever removed,
// and only when no file has the decoded name: then the literal file is the
// only file the location can mean (the writers that escape partition
// values, Java and PyIceberg, wrote it there). When the decoded name
// exists, icewright cannot tell which of the two files is the table's (an
// iceberg-go writer put it under the decoded name; or it is another file),
// so both stay and why says so. When neither exists, the literal name is
// returned: removing it finds nothing, and the file is gone either way.
func DeletionName(fsys iceio.IO, p string) (name, why string, err error) {
	lit, ok := LiteralKey(p)
	if !ok {
		return p, "", nil
	}
	decoded, err := exists(fsys, p)
	if err != nil {
		return "", "", fmt.Errorf("look for %s under its decoded name: %w", p, err)
	}
	if decoded {
		dec, _ := LocalPath(p)
		return "", fmt.Sprintf("a file: URI with percent-escapes: iceberg-go reads it as %s, which exists, while Java, Spark, PyIceberg and DuckDB read it as %s; "+
			"icewright cannot tell which file is the table's, so it deletes neither (an orphan sweep removes the one no table references)",
			dec, uriPathAsWritten(p)), nil
	}
	return lit, "", nil
}

// uriPathAsWritten is the path of a file: URI as written, escapes and all:
// the local name the engines that read it literally open.
func uriPathAsWritten(p string) string {
	_, rest, _ := strings.Cut(p, ":")
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		if i := strings.IndexByte(after, '/'); i >= 0 {
			return after[i:]
		}
		return "/"
	}
	return rest
}

// exists reports whether iceberg-go's IO finds a file at location p.
func exists(fsys iceio.IO, p string) (bool, error) {
	f, err := fsys.Open(p)
	if err != nil {
		if IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	return true, f.Close()
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

// LockDir is the directory under a table's location that holds icewright'
// leases on the table (docs/design.md §5.4, Locking). Like the quarantine,
// it is icewright's own: the orphan sweep never lists it. Its name is a
// "format-owned" one (`_` and lower case, no dot or dash): an S3 table
// bucket (SeaweedFS's, as AWS's) accepts keys only under data/, metadata/
// (Iceberg file names only, no subdirectories) and such directories, and
// Java's orphan removal never enters a `_` directory.
const LockDir = "_icewright_lock"

// ioFamilies are the schemes one iceberg-go IO serves together
// (iceberg-go internal/schemes: one registration per family).
var ioFamilies = map[string]string{
	"s3": "s3", "s3a": "s3", "s3n": "s3", "oss": "s3",
	"abfs": "azure", "abfss": "azure", "wasb": "azure", "wasbs": "azure",
}

// Storage names the storage location p is on as iceberg-go's IOs tell
// them apart: "file" for a local path (no scheme, a file: URI, or a name
// like "part:1/x" that iceberg-go's local IO reads as a path), else the
// scheme's IO family and the authority ("s3://bucket"): its object-store
// IOs serve one bucket or container each. A table's files are read and
// deleted through one IO, the one for its metadata location's storage;
// a file on another storage is one that IO cannot open.
func Storage(p string) string {
	scheme, rest, ok := strings.Cut(p, "://")
	if !ok || strings.ContainsAny(scheme, `/\`) {
		return "file"
	}
	scheme = strings.ToLower(scheme)
	if scheme == "file" {
		return "file"
	}
	if f, ok := ioFamilies[scheme]; ok {
		scheme = f
	}
	authority, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + authority
}
