package orphans

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// Other tables' references (docs/design.md §5.5 rule 6, issue 41): a file
// that another table references is never this table's orphan, wherever it
// lies. Every table the run can see is read once per run, when a sweep or
// an expiry first has something to delete (ReadTable: its location, write
// paths and every file its snapshots reach outside them), and Tables
// indexes what they reference outside their own places by path, so that a
// sweep asks the index for the files under its roots (foreignUnder) and
// expiry for a file (ReferencedBy) instead of passing over the other
// tables.

// ReadTable is t's TableLocation with its foreign references: every file
// any snapshot of any ref reaches (data, deletes, deletion vectors' Puffin
// files, statistics, manifests and manifest lists, the metadata log) that
// lies outside the table's own location and write paths. A table whose
// manifests cannot be read is Unreadable, with its location. dec decodes
// its manifests: a plan's references may take reach.DecodeFast; what apply
// deletes by is read with iceberg-go's reader (reach.DecodeVerified).
func ReadTable(ctx context.Context, t *table.Table, dec reach.Decoder) TableLocation {
	tl := LocationOf(t)
	refs, err := foreignRefs(ctx, t, dec)
	if err != nil {
		tl.Unreadable = err.Error()
		return tl
	}
	tl.Foreign = refs
	return tl
}

// foreignRefs walks every snapshot of t and keeps the paths outside its
// sweep roots (plain path keys), as written, sorted and unique.
func foreignRefs(ctx context.Context, t *table.Table, dec reach.Decoder) ([]string, error) {
	roots := sweepRoots(t.Location(), t.Properties(), store.NormPath)
	var out []string
	keep := func(p string) {
		if !underAny(store.NormPath(p), roots) {
			out = append(out, p)
		}
	}
	md := t.Metadata()
	keep(t.MetadataLocation())
	for e := range md.PreviousFiles() {
		keep(e.MetadataFile)
	}
	if len(md.Snapshots()) > 0 {
		fsys, err := t.FS(ctx)
		if err != nil {
			return nil, fmt.Errorf("open storage: %w", err)
		}
		err = reach.Walk(ctx, reach.Spec{
			Meta:      md,
			FS:        fsys,
			Snapshots: reach.AllSnapshots(md),
			Decoder:   dec,
			Consumers: []reach.Consumer{{WithDeleted: true, File: func(f reach.File) error {
				keep(f.Path)
				return nil
			}}},
		})
		if err != nil {
			return nil, fmt.Errorf("read its manifests: %w", err)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Tables is every table the run can see, keyed by address (a table of a
// configured catalog, or one under another catalog_name in a SQL catalog's
// database), with its location and write paths, and the index of the
// references they hold outside their own places. The references cost a
// read of every manifest of every table, so they are read once per run and
// only when a sweep or an expiry has something to delete
// (ReadReferences): a sweep with no candidate never pays for them.
type Tables struct {
	Locs map[string]TableLocation

	// references reads the references of every table but skip ("": of
	// every one; ReadTable); nil: Locs hold them already (NewTables).
	references func(ctx context.Context, skip string) (map[string]TableLocation, error)
	mu         sync.Mutex // the reading and indexing below
	done       bool       // read (or failed: err)
	skipped    string     // the table whose references were not read: the first asker's own
	err        error
	read       map[string]TableLocation // with references, once read
	// refs is the index, sorted by key: replaced whole (never changed in
	// place) when a skipped table is read, so a reader holds one version.
	refs atomic.Pointer[[]foreignRef]

	locMu  sync.Mutex
	locIdx map[string]*locationIndex // by normID (overlapping)
	// unreadableTables (unreadable), before and after ReadReferences.
	unreadableDone   [2]bool
	unreadableTables [2][]unreadableTable
}

// foreignRef is one key of the index: a referenced file's plain path key
// (store.NormPath), its literal-name key, or its resolved local spelling.
type foreignRef struct {
	key   string
	raw   string // as written
	owner string
}

// NewTables is locs, read with their references (ReadTable).
func NewTables(locs map[string]TableLocation) *Tables {
	return &Tables{Locs: locs}
}

// LazyTables is locs (LocationOf), whose references references reads when
// first asked (ReadReferences), but those of skip.
func LazyTables(locs map[string]TableLocation, references func(ctx context.Context, skip string) (map[string]TableLocation, error)) *Tables {
	return &Tables{Locs: locs, references: references}
}

// ReadReferences reads the tables' references, once, and indexes them by
// path key; an error (a catalog that cannot be listed) leaves them unknown.
// foreignUnder and ReferencedBy answer from what it read. self is the
// asker's own table: its references are never foreign to it (every answer
// leaves self's out), so the first asker's are not read; they are read when
// another table asks (apply's sweep or expiry of self reads its own
// reachable set with iceberg-go's reader anyway: reading it a second time
// here was half as much again of their reads, issue 45 item 4).
func (ts *Tables) ReadReferences(ctx context.Context, self string) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch {
	case ts.done && (ts.err != nil || ts.skipped == "" || ts.skipped == self):
		return ts.err
	case ts.done:
		// The first asker's own table, not read then, is another's now.
		self = ""
	}
	locs := ts.Locs
	if ts.references != nil {
		locs, ts.err = ts.references(ctx, self)
		ts.done = true
		if ts.err != nil {
			return ts.err
		}
		ts.skipped = self
	}
	ts.done = true
	ts.locMu.Lock()
	ts.read = locs
	ts.unreadableDone[1] = false
	ts.locMu.Unlock()
	var refs []foreignRef
	dirs := map[string]string{} // local directory -> its resolved key ("" unresolved)
	for addr, tl := range locs {
		for _, p := range tl.Foreign {
			k := store.NormPath(p)
			refs = append(refs, foreignRef{k, p, addr})
			if lit, ok := store.LiteralKey(p); ok {
				refs = append(refs, foreignRef{lit, p, addr})
			}
			if r := resolvedFileKey(k, dirs); r != "" && r != k {
				refs = append(refs, foreignRef{r, p, addr})
			}
		}
	}
	slices.SortFunc(refs, func(a, b foreignRef) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.owner, b.owner)
	})
	ts.refs.Store(&refs)
	return nil
}

// index is the index as last read (nil before).
func (ts *Tables) index() []foreignRef {
	if r := ts.refs.Load(); r != nil {
		return *r
	}
	return nil
}

// resolvedFileKey is the key of a local file's path with its directory's
// symbolic links resolved, or "" when it is not local or cannot be
// resolved (a file that is not there cannot be deleted either). dirs
// caches the directories' answers.
func resolvedFileKey(key string, dirs map[string]string) string {
	if !strings.HasPrefix(key, "file://") {
		return ""
	}
	dir, base := key[:strings.LastIndexByte(key, '/')], key[strings.LastIndexByte(key, '/')+1:]
	r, ok := dirs[dir]
	if !ok {
		r, _ = resolveKey(dir, store.NormPath)
		dirs[dir] = r
	}
	if r == "" {
		return ""
	}
	return r + "/" + base
}

// under is the index's entries whose key lies inside root (a key without
// a trailing slash): one binary search and the run that follows.
func (ts *Tables) under(root string) []foreignRef {
	refs := ts.index()
	lo := root + "/"
	i, _ := slices.BinarySearchFunc(refs, lo, func(r foreignRef, k string) int { return strings.Compare(r.key, k) })
	j := i
	for j < len(refs) && strings.HasPrefix(refs[j].key, lo) {
		j++
	}
	return refs[i:j]
}

// foreignUnder is, for a sweep of self over roots (keys by norm; resolved,
// their resolved spellings, or ""), the keys by norm of the files under
// them that another table references, each with the first table that
// does. mapped says norm maps schemes or authorities (equal_schemes,
// equal_authorities): the index's plain keys are then normalised again.
func (ts *Tables) foreignUnder(self string, roots, resolved []string, norm func(string) string, mapped bool) map[string]string {
	out := map[string]string{}
	add := func(k, owner string) {
		if owner == self {
			return
		}
		if _, ok := out[k]; !ok {
			out[k] = owner
		}
	}
	for i, r := range roots {
		for _, e := range ts.under(r) {
			add(e.key, e.owner)
		}
		if rr := resolved[i]; rr != "" && rr != r {
			// A file referenced by its resolved path is listed under the
			// root's own spelling.
			for _, e := range ts.under(rr) {
				add(r+strings.TrimPrefix(e.key, rr), e.owner)
			}
		}
	}
	if mapped {
		for _, e := range ts.index() {
			if k := norm(e.raw); underAny(k, roots) {
				add(k, e.owner)
			}
		}
	}
	return out
}

// ReferencedBy names a table other than self that references the file p
// (by its plain key, its literal name, or its resolved local path), or "".
func (ts *Tables) ReferencedBy(self, p string) string {
	keys := []string{store.NormPath(p)}
	if lit, ok := store.LiteralKey(p); ok {
		keys = append(keys, lit)
	}
	if r := resolvedFileKey(keys[0], map[string]string{}); r != "" && r != keys[0] {
		keys = append(keys, r)
	}
	refs := ts.index()
	for _, k := range keys {
		i, _ := slices.BinarySearchFunc(refs, k, func(r foreignRef, k string) int { return strings.Compare(r.key, k) })
		for ; i < len(refs) && refs[i].key == k; i++ {
			if refs[i].owner != self {
				return refs[i].owner
			}
		}
	}
	return ""
}

// Unreadable names the tables other than self that could not be read (or
// whose local location could not be resolved) and that could hold files
// under roots: the files they reference are unknown, so a sweep there is
// refused (and expiry keeps every file there). A table of unknown location
// can reach anything; one of known location, its own storage (bucket,
// container or file system). Before ReadReferences, only what loading the
// tables found.
func (ts *Tables) Unreadable(self string, roots []string) []string {
	var out []string
	for _, u := range ts.unreadable() {
		if u.addr != self && reaches(u.tl, roots) {
			out = append(out, fmt.Sprintf("%s (%s)", u.addr, u.tl.Unreadable))
		}
	}
	slices.Sort(out)
	return out
}

type unreadableTable struct {
	addr string
	tl   TableLocation
}

// unreadable are the tables that could not be read (Unreadable set), by
// what ReadReferences read when it has, else by Locs: found once for each
// of the two, not on every sweep's question (a pass over every table per
// table is quadratic in a fleet, issue 44).
func (ts *Tables) unreadable() []unreadableTable {
	ts.locMu.Lock()
	defer ts.locMu.Unlock()
	afterRead := ts.read != nil
	if ts.unreadableDone[btoi(afterRead)] {
		return ts.unreadableTables[btoi(afterRead)]
	}
	var out []unreadableTable
	for addr, tl := range ts.Locs {
		if r, ok := ts.read[addr]; ok {
			tl = r
		}
		if tl.Unreadable != "" {
			out = append(out, unreadableTable{addr, tl})
		}
	}
	ts.unreadableDone[btoi(afterRead)] = true
	ts.unreadableTables[btoi(afterRead)] = out
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func reaches(tl TableLocation, roots []string) bool {
	paths := tablePaths(tl.Location, tl.WritePaths)
	if len(paths) == 0 {
		return true
	}
	for _, p := range paths {
		k := rootKey(p, store.NormPath)
		for _, r := range roots {
			if sameStorage(k, r) {
				return true
			}
		}
	}
	return false
}

// UnreadableRefusal is the reason a sweep is refused for tables whose
// references could not be read, the same words in plan and apply.
func UnreadableRefusal(tables []string) string {
	return "other tables that could hold files under the sweep could not be read, so the files they reference are unknown: " + strings.Join(tables, "; ") +
		"; grant this run read access to them (or fix them), or exclude their catalog from the configuration if they are not on this storage"
}

// resolveKey is a local key (file://) with every symbolic link of its path
// resolved, normalised by norm; a path below the deepest existing directory
// is taken as written (nothing there to resolve yet). Another key is
// returned as it is. An error says the path cannot be resolved (a dangling
// link, no permission).
func resolveKey(key string, norm func(string) string) (string, error) {
	local, err := keyLocalPath(key)
	if err != nil {
		return key, nil // not a local path
	}
	p, rest := local, ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return rootKey(filepath.Join(r, rest), norm), nil
		}
		if !errors.Is(err, iofs.ErrNotExist) {
			return "", fmt.Errorf("resolve %s: %w", local, err)
		}
		if _, lerr := os.Lstat(p); lerr == nil {
			return "", fmt.Errorf("resolve %s: %s is a symbolic link to nothing", local, p)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return key, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// resolveRoots is each root's resolved spelling (resolveKey), or why one
// cannot be resolved.
func resolveRoots(roots []string, norm func(string) string) ([]string, string) {
	out := make([]string, len(roots))
	for i, r := range roots {
		rr, err := resolveKey(r, norm)
		if err != nil {
			return nil, fmt.Sprintf("sweep root %s: %v: the sweep cannot tell which other tables' files lie under it", r, err)
		}
		out[i] = rr
	}
	return out, ""
}
