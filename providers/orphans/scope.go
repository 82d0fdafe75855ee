package orphans

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
)

// The scope of an orphan sweep (docs/design.md §5.5 rules 6 and 8): which roots a
// table's sweep lists, whether they may be swept at all, which other tables
// share them, and with which storage settings they are listed. The plan
// (Scan) and apply (Remove) both decide with these
// functions, so the two cannot disagree about what a sweep covers.

// writePathProperties are the table properties that put a table's files
// outside its location: the data and metadata paths and the older
// spellings of the data path that writers still honour (Iceberg's
// LocationProviders read write.object-storage.path and
// write.folder-storage.path when write.data.path is unset).
var writePathProperties = []string{"write.data.path", "write.metadata.path", "write.folder-storage.path", "write.object-storage.path"}

// orphanNorm is the path normaliser of one policy's sweep: the one
// normaliser (diff.NormalizePath) with the policy's equal_schemes and
// equal_authorities, the same in plan and apply.
func orphanNorm(equalSchemes, equalAuthorities map[string]string) func(string) string {
	return func(p string) string { return diff.NormalizePath(p, equalSchemes, equalAuthorities) }
}

// orphanLiteral is the literal-name key of one policy's sweep
// (diff.LiteralKey with the same maps as orphanNorm): for a reference that is
// a file: URI whose path changes when decoded, the key of the name the
// engines that wrote it use, beside orphanNorm's key of the name iceberg-go
// opens. Both names of such a reference are the table's for the sweep: it
// never proposes either, and only the decoded one is required in the
// listing (rule 3, as before: a table iceberg-go wrote has its files there).
func orphanLiteral(equalSchemes, equalAuthorities map[string]string) func(string) (string, bool) {
	return func(p string) (string, bool) { return diff.LiteralKey(p, equalSchemes, equalAuthorities) }
}

// sweepRoots is the sweep scope of a table: its location and every write
// path that is set (writePathProperties), normalised by norm, without a
// trailing slash, sorted, and without roots nested in others (those are
// listed with their parent).
func sweepRoots(location string, props map[string]string, norm func(string) string) []string {
	var roots []string
	for _, r := range tablePaths(location, props) {
		roots = append(roots, rootKey(r, norm))
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	var out []string
	for _, r := range roots {
		if len(out) > 0 && underRoot(r, out[len(out)-1]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// tablePaths is a table's location and its write paths that are set, as
// written.
func tablePaths(location string, props map[string]string) []string {
	var out []string
	if location != "" {
		out = append(out, location)
	}
	for _, k := range writePathProperties {
		if v := props[k]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// rootKey is the normalised key of a directory, without a trailing slash
// ("s3://b/" is "s3://b", "file:///" is "file://"), so that underRoot can
// append one.
func rootKey(p string, norm func(string) string) string {
	k := norm(p)
	if strings.HasSuffix(k, "/") && !strings.HasSuffix(k, "://") {
		k = k[:len(k)-1]
	}
	return k
}

// overlaps reports whether two directory keys share files: one is the
// other or lies inside it.
func overlaps(a, b string) bool {
	return underRoot(a, b) || underRoot(b, a)
}

// isStorageRoot reports whether a root key is a whole bucket, container or
// file system ("s3://b", "abfs://c@acct.dfs.core.windows.net", "file://").
func isStorageRoot(key string) bool {
	return pathPart(key+"/") == "/"
}

// rootProblem says why a sweep over roots must not run, or "". allowed
// are the storage roots the policy opts in to sweeping whole
// (orphan_files.allow_storage_roots), normalised like the roots.
func rootProblem(roots, allowed []string) string {
	for _, r := range roots {
		if !strings.Contains(r, "://") {
			// A relative location would be listed against our working
			// directory: nothing found there may be called an orphan.
			return fmt.Sprintf("sweep root %q is not an absolute location (check the table location and its %s properties)", r, strings.Join(writePathProperties, ", "))
		}
	}
	for _, r := range roots {
		if isStorageRoot(r) && !slices.Contains(allowed, r) {
			// Everything stored there would be listed, and only the
			// configured catalogs' tables are checked for overlap: files of
			// any other writer would look orphaned.
			return fmt.Sprintf("sweep root %q is the root of its bucket, container or file system: every file stored there would be swept; name it in orphan_files.allow_storage_roots to allow this", displayRoot(r))
		}
	}
	return ""
}

// allowedRoots normalises orphan_files.allow_storage_roots like the roots.
func allowedRoots(allow []string, norm func(string) string) []string {
	out := make([]string, 0, len(allow))
	for _, a := range allow {
		out = append(out, rootKey(a, norm))
	}
	return out
}

// displayRoot spells a root key for people: "s3://b/" rather than "s3://b".
func displayRoot(key string) string {
	if isStorageRoot(key) {
		return key + "/"
	}
	return key
}

// TableLocation is one catalog table's identity and the places its files
// live: its location and the write paths that are set (by property name),
// and what it references outside them.
type TableLocation struct {
	UUID       string
	Location   string
	WritePaths map[string]string
	// Resolved are the keys of the location and write paths on local
	// storage with their symbolic links resolved, where that changes them.
	Resolved []string
	// Foreign are the files the table references outside its location and
	// write paths (ReadTable), as written.
	Foreign []string
	// Unreadable, when set, says why the table could not be read (loaded,
	// its manifests read, or its local location resolved): its references
	// are unknown. Location is then what is known of it, maybe nothing.
	Unreadable string
}

// LocationOf is t's TableLocation, without its references (ReadTable).
func LocationOf(t *table.Table) TableLocation {
	tl := TableLocation{UUID: t.Metadata().TableUUID().String(), Location: t.Location()}
	props := t.Properties()
	for _, k := range writePathProperties {
		if v := props[k]; v != "" {
			if tl.WritePaths == nil {
				tl.WritePaths = map[string]string{}
			}
			tl.WritePaths[k] = v
		}
	}
	// A location spelled through a symbolic link is compared by where it
	// leads (local storage only: object stores have no links).
	for _, p := range tablePaths(tl.Location, tl.WritePaths) {
		k := rootKey(p, store.NormPath)
		r, err := resolveKey(k, store.NormPath)
		if err != nil {
			tl.Unreadable = err.Error()
			continue
		}
		if r != k {
			tl.Resolved = append(tl.Resolved, r)
		}
	}
	return tl
}

// overlappingTables names the tables of locs other than self whose location
// or any write path overlaps a sweep root (inside it, containing it, or the
// same), apache/iceberg#7111: their files are not in our referenced set and
// would look orphaned. Only self (by address) is skipped: another catalog
// entry with the same UUID (a register_table twin) is another table whose
// commits we do not see, and is named like any other.
//
// On local storage the comparison is also made on resolved paths (the
// roots' resolved, the other tables' TableLocation.Resolved), so that a
// location spelled through a symbolic link is compared by where it leads.
func overlappingTables(self string, locs map[string]TableLocation, roots, resolved []string, norm func(string) string) []string {
	all := slices.Concat(roots, resolved)
	all = slices.DeleteFunc(all, func(r string) bool { return r == "" })
	var out []string
	for addr, tl := range locs {
		if addr == self {
			continue
		}
		keys := slices.Clone(tl.Resolved)
		for _, p := range tablePaths(tl.Location, tl.WritePaths) {
			keys = append(keys, rootKey(p, norm))
		}
	check:
		for _, k := range keys {
			for _, r := range all {
				if overlaps(k, r) {
					out = append(out, addr)
					break check
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// sameStorage reports whether two root keys are on one bucket, container or
// file system (scheme and authority).
func sameStorage(a, b string) bool {
	return schemeAuthority(a+"/") == schemeAuthority(b+"/")
}

// storageSettingPrefixes are the catalog properties that configure the IO
// of a scheme (iceberg-go io/config.go).
var storageSettingPrefixes = map[string]string{
	"s3": "s3.", "gs": "gcs.", "gcs": "gcs.", "abfs": "adls.", "abfss": "adls.", "wasb": "adls.", "wasbs": "adls.",
}

// rootStorage opens the IO that lists and deletes under root. A root on
// the table location's storage (same scheme and authority) uses the
// table's own IO. Any other root (a write.data.path on another bucket) is
// opened with the catalog's storage settings, the properties of its
// catalog block, as the catalog itself was given them: never with the
// table's metadata properties, which hold no endpoint or credentials (on
// AWS that would be whatever default credentials are around). When the
// catalog block has no settings for that storage at all, the sweep is
// refused, naming the root, rather than guessing.
func rootStorage(ctx context.Context, tableFS iceio.IO, locKey string, storage map[string]string, root string) (iceio.IO, error) {
	if sameStorage(root, locKey) {
		return tableFS, nil
	}
	scheme, _, _ := strings.Cut(root, "://")
	if prefix, ok := storageSettingPrefixes[scheme]; ok {
		has := false
		for k := range storage {
			if strings.HasPrefix(k, prefix) {
				has = true
				break
			}
		}
		if !has {
			return nil, fmt.Errorf("%w: sweep root %q is on other storage than the table location and the catalog block sets no %s* properties for it: set them in the catalog's properties, or remove the path", store.ErrRefused, displayRoot(root), prefix)
		}
	}
	props := maps.Clone(storage)
	if props == nil {
		props = map[string]string{}
	}
	f, err := iceio.LoadFS(ctx, props, root)
	if err != nil {
		return nil, fmt.Errorf("open storage of %s: %w", displayRoot(root), err)
	}
	return f, nil
}

// keyLocalPath is the OS path of a normalised file:// key (diff.NormalizePath
// escapes '%', '?' and '#' in it; the file's name has them raw).
func keyLocalPath(key string) (string, error) {
	u, err := url.Parse(key + "/")
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" || u.Host != "" {
		return "", fmt.Errorf("%s is not a local path", key)
	}
	return filepath.Clean(u.Path), nil
}
