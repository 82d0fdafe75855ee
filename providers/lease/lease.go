package lease

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/apache/iceberg-go/table"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/icewright/icewright/providers/internal/store"
)

// Lease is one apply's hold on a table while it works on it
// (docs/design.md §5.4, Locking): who holds it, for which run, since when
// and until when. A lease past its expiry belongs to nobody (its run
// crashed or was killed) and the next apply takes it over.
//
// A lease is an object in the table's own storage, under
// <location>/_icewright_lock/ (leaseDir), never a property of the table: taking,
// renewing and dropping it commits nothing, so a table apply has nothing
// to do for, or refuses, or fails on, keeps its metadata exactly as it
// was, and a heartbeat every few seconds costs one small write instead of
// a metadata version (issue 26). The objects are created with the store's
// create-if-absent write (O_EXCL-like link locally; If-None-Match on S3,
// a generation precondition on GCS, If-None-Match on Azure, through
// gocloud's IfNotExist), so of two runs only one creates a generation.
type Lease struct {
	Owner     string    `json:"owner"`
	RunID     string    `json:"run_id"`
	Since     time.Time `json:"since"`
	ExpiresAt time.Time `json:"expires_at"`
}

// LockedError is a table whose lease another run holds.
type LockedError struct{ Holder Lease }

func (e *LockedError) Error() string {
	s := fmt.Sprintf("locked by %s (run %s", e.Holder.Owner, e.Holder.RunID)
	if !e.Holder.Since.IsZero() {
		s += ", since " + e.Holder.Since.UTC().Format(time.RFC3339)
	}
	return s + ") until " + e.Holder.ExpiresAt.UTC().Format(time.RFC3339)
}

// ErrLockLost: the lease was taken over (it had expired) or removed by
// someone else (force-unlock) while this run held it.
var ErrLockLost = errors.New("the table's lock is no longer this run's")

// ErrNoLease is force-unlock of a run that holds no lease on the table.
var ErrNoLease = errors.New("no lease of that run on the table")

// leaseGen is one generation of a table's lease: the object
// <location>/_icewright_lock/lease-<gen>.json. The highest generation is the
// lease in force; a run takes the lease by creating the next generation
// (create-if-absent: of two runs that saw the same generation, one
// creates the next and the other finds it there). A taker removes the
// generations below its own: they are released or expired.
type leaseGen struct {
	gen   int64
	lease Lease
	ok    bool // the object parsed (a half-written or foreign object does not)
}

const leasePrefix = "lease-"

func leaseName(gen int64) string { return fmt.Sprintf("%s%020d.json", leasePrefix, gen) }

func parseLeaseName(name string) (int64, bool) {
	if !strings.HasPrefix(name, leasePrefix) || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(name, leasePrefix), ".json"), 10, 64)
	return n, err == nil && n > 0
}

// Store is the table's lock directory on its storage.
type Store struct {
	dir string // <location>/_icewright_lock, as a location of the table's storage
	fs  iceio.IO
}

// Open is t's lock directory on its storage. iceberg-go's blob FS sends
// every request with the context it was opened with (ctx here): a store
// that must outlive ctx is opened with a detached one (providers'
// TakeLease).
func Open(ctx context.Context, t *table.Table) (*Store, error) {
	fsys, err := t.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	return &Store{dir: leaseDir(t.Location()), fs: fsys}, nil
}

// leaseDir is where a table's leases live: <location>/_icewright_lock
// (store.LockDir says why that name).
func leaseDir(location string) string {
	return strings.TrimRight(location, "/") + "/" + store.LockDir
}

// generations lists the lease objects, highest generation first.
func (s *Store) generations(ctx context.Context) ([]leaseGen, error) {
	var names []string
	if local, ok := store.LocalPath(s.dir); ok {
		entries, err := os.ReadDir(local)
		if err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return nil, err
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
	} else {
		lio, ok := s.fs.(iceio.ListableIO)
		if !ok {
			return nil, fmt.Errorf("storage %T cannot list", s.fs)
		}
		err := lio.WalkDir(s.dir, func(p string, d iofs.DirEntry, err error) error {
			if err != nil {
				if d == nil && errors.Is(err, iofs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !d.IsDir() {
				names = append(names, path.Base(p))
			}
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
	}
	var gens []leaseGen
	for _, n := range names {
		g, ok := parseLeaseName(n)
		if !ok {
			continue
		}
		lg := leaseGen{gen: g}
		if data, err := s.read(leaseName(g)); err == nil {
			lg.ok = json.Unmarshal(data, &lg.lease) == nil && lg.lease.RunID != ""
		} else if !store.IsNotExist(err) {
			return nil, err
		} else {
			continue // released between the listing and the read
		}
		gens = append(gens, lg)
	}
	slices.SortFunc(gens, func(a, b leaseGen) int { return cmp.Compare(b.gen, a.gen) })
	return gens, nil
}

func (s *Store) path(name string) string { return s.dir + "/" + name }

func (s *Store) read(name string) ([]byte, error) {
	f, err := s.fs.Open(s.path(name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<16))
}

// create writes name only if no object of that name exists; an existing
// one is iofs.ErrExist.
func (s *Store) create(ctx context.Context, name string, data []byte) error {
	p := s.path(name)
	if local, ok := store.LocalPath(p); ok {
		// A lease is published whole: written to a temporary name, then
		// linked to its own (link fails if the name exists), so a reader
		// never sees half of one.
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return err
		}
		return publishLocal(local, data, os.Link)
	}
	bfs, ok := s.fs.(*blobfs.FileIO)
	if !ok {
		return fmt.Errorf("storage %T has no create-if-absent write", s.fs)
	}
	w, err := bfs.NewWriter(ctx, p, true, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"})
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		if c := gcerrors.Code(err); c == gcerrors.FailedPrecondition || c == gcerrors.AlreadyExists {
			return fmt.Errorf("%s: %w", p, iofs.ErrExist)
		}
		return err
	}
	return nil
}

// overwrite replaces name's content (the holder renewing its own
// generation: nobody else writes that name).
func (s *Store) overwrite(name string, data []byte) error {
	p := s.path(name)
	if local, ok := store.LocalPath(p); ok {
		return publishLocal(local, data, os.Rename)
	}
	wfs, ok := s.fs.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("storage %T cannot write", s.fs)
	}
	return wfs.WriteFile(p, data)
}

// publishLocal writes data to a temporary file beside local and publishes
// it under local with publish (os.Link: only if local does not exist;
// os.Rename: replacing it), so a reader never sees half of a lease.
func publishLocal(local string, data []byte, publish func(oldname, newname string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(local), ".tmp-lease-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return publish(tmp.Name(), local)
}

func (s *Store) remove(name string) error {
	if err := s.fs.Remove(s.path(name)); err != nil && !store.IsNotExist(err) {
		return err
	}
	return nil
}

// removeDirIfEmpty tidies a local lock directory after the last release
// (object stores have no directories to leave behind).
func (s *Store) removeDirIfEmpty() {
	if local, ok := store.LocalPath(s.dir); ok {
		_ = os.Remove(local) // fails, harmlessly, while anything is in it
	}
}

// leaseBeforeCreate, set only by tests, runs between reading the lease and
// creating the next generation: the window two runs race in.
var leaseBeforeCreate func()

// Acquire takes the table's lease for lease.RunID, or returns a
// *LockedError naming the holder. A lease of the same run is renewed; an
// expired one, or an object that does not parse (it is not a lease of any
// live run: a half-written object never exists, see create), is taken
// over by creating the next generation.
func (s *Store) Acquire(ctx context.Context, lease Lease, now time.Time) (int64, error) {
	data, err := json.Marshal(lease)
	if err != nil {
		return 0, err
	}
	for range 10 {
		gens, err := s.generations(ctx)
		if err != nil {
			return 0, fmt.Errorf("read lock: %w", err)
		}
		next := int64(1)
		if len(gens) > 0 {
			top := gens[0]
			if top.ok && top.lease.RunID == lease.RunID {
				if err := s.overwrite(leaseName(top.gen), data); err != nil {
					return 0, fmt.Errorf("renew lock: %w", err)
				}
				return top.gen, nil
			}
			if top.ok && now.Before(top.lease.ExpiresAt) {
				return 0, &LockedError{Holder: top.lease}
			}
			next = top.gen + 1
		}
		if leaseBeforeCreate != nil {
			leaseBeforeCreate()
		}
		err = s.create(ctx, leaseName(next), data)
		if errors.Is(err, iofs.ErrExist) || errors.Is(err, os.ErrExist) {
			continue // another run took that generation first: look again
		}
		if err != nil {
			return 0, fmt.Errorf("write lock: %w", err)
		}
		for _, g := range gens {
			_ = s.remove(leaseName(g.gen)) // released or expired; a leftover is harmless
		}
		return next, nil
	}
	return 0, errors.New("write lock: the lock changed hands ten times while taking it; try again")
}

// Renew extends the run's lease of generation gen. A higher generation,
// or its own gone, is ErrLockLost.
func (s *Store) Renew(ctx context.Context, gen int64, lease Lease) error {
	gens, err := s.generations(ctx)
	if err != nil {
		return fmt.Errorf("renew lock: %w", err)
	}
	if len(gens) == 0 || gens[0].gen != gen || !gens[0].ok || gens[0].lease.RunID != lease.RunID {
		return ErrLockLost
	}
	data, err := json.Marshal(lease)
	if err != nil {
		return err
	}
	if err := s.overwrite(leaseName(gen), data); err != nil {
		return fmt.Errorf("renew lock: %w", err)
	}
	return nil
}

// Release removes runID's leases; ErrLockLost when the run held none.
func (s *Store) Release(ctx context.Context, runID string) error {
	gens, err := s.generations(ctx)
	if err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	found := false
	for _, g := range gens {
		if g.ok && g.lease.RunID == runID {
			found = true
			if err := s.remove(leaseName(g.gen)); err != nil {
				return fmt.Errorf("release lock: %w", err)
			}
		}
	}
	if !found {
		return ErrLockLost
	}
	if len(gens) == 1 {
		s.removeDirIfEmpty()
	}
	return nil
}

// Current is the lease in force, if any, expired or not.
func (s *Store) Current(ctx context.Context) (Lease, bool, error) {
	gens, err := s.generations(ctx)
	if err != nil || len(gens) == 0 || !gens[0].ok {
		return Lease{}, false, err
	}
	return gens[0].lease, true, nil
}

// ReleaseRun removes the lease of runID (force-unlock) and returns it;
// ErrNoLease when that run holds none, naming the run whose lease is there.
func (s *Store) ReleaseRun(ctx context.Context, runID string) (Lease, error) {
	gens, err := s.generations(ctx)
	if err != nil {
		return Lease{}, fmt.Errorf("read lock: %w", err)
	}
	for _, g := range gens {
		if g.ok && g.lease.RunID == runID {
			if err := s.Release(ctx, runID); err != nil {
				return Lease{}, err
			}
			return g.lease, nil
		}
	}
	var held []string
	for _, g := range gens {
		if g.ok {
			held = append(held, g.lease.RunID)
		}
	}
	if len(held) > 0 {
		return Lease{}, fmt.Errorf("%w (the lease there is run %s's)", ErrNoLease, strings.Join(held, ", "))
	}
	return Lease{}, ErrNoLease
}
