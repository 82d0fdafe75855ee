package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/catalogs"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/store"
)

// Options narrow `icewright doctor`.
type Options struct {
	// Catalog is the one catalog to check; "" checks every one.
	Catalog string
	// Selectors are table globs (config.MatchPattern); none means every
	// table of each checked catalog.
	Selectors []string
}

// ClockSkewWarn and ClockSkewFail are the thresholds of doctor's clock
// check. The orphan sweep's age guard compares each file's time in the
// store (LastModified) with this machine's clock: a store whose clock is
// behind by X makes every file look X older, so a file an uncommitted
// write has just put there looks X closer to orphan_files.older_than (at
// least 24h, config's minimum). A minute is beyond ordinary NTP drift and
// the store's one-second time resolution; an hour eats a noticeable part
// of the smallest guard, and S3 itself refuses requests signed 15 minutes
// off, so such a skew is a setup to fix before sweeping.
const (
	ClockSkewWarn = time.Minute
	ClockSkewFail = time.Hour
)

// checker is a session doctor reports on.
type checker struct{ *providers.Session }

// Run checks each configured catalog (or opts.Catalog) of the session:
// that it answers, where its storage credentials come from, that its
// warehouse allows list, write, read and delete of a probe object, the
// clock skew against the store, and per table what icewright can and
// cannot do there; then each engine block's endpoint. Only an unknown
// catalog name is an error; everything else is a finding.
func Run(ctx context.Context, sess *providers.Session, opts Options) (*diff.Doctor, error) {
	s := &checker{sess}
	ctx = s.WithStorageLimits(ctx)
	var cats []*config.Catalog
	for _, c := range s.Config().Catalogs {
		if opts.Catalog == "" || c.Name == opts.Catalog {
			cats = append(cats, c)
		}
	}
	if opts.Catalog != "" && len(cats) == 0 {
		return nil, fmt.Errorf("doctor: catalog %q is not configured", opts.Catalog)
	}
	rep := &diff.Doctor{Findings: []diff.DoctorFinding{}}
	var listed []string
	unreachable := map[string]bool{}
	for _, cc := range cats {
		tables, ok := s.doctorCatalog(ctx, cc, opts.Selectors, rep)
		listed = append(listed, tables...)
		unreachable[cc.Name] = !ok
	}
	s.doctorEngines(ctx, cats, rep)
	// A selector that matches nothing is a mistake to show, as plan shows
	// a -target that matches nothing, unless its catalog did not answer.
	for _, sel := range opts.Selectors {
		cat, _, _ := strings.Cut(sel, ".")
		if unreachable[cat] || slices.ContainsFunc(listed, func(a string) bool { return config.MatchPattern(sel, a) }) {
			continue
		}
		f := diff.DoctorFinding{Catalog: cat, Check: "selector", Status: diff.DoctorWarn, Message: fmt.Sprintf("%q matches no table of the checked catalogs", sel)}
		if sug := config.SuggestPattern(sel, listed); sug != "" {
			f.Fix = fmt.Sprintf("did you mean %q?", sug)
		}
		rep.Add(f)
	}
	return rep, nil
}

// doctorCatalog adds the findings of one catalog and returns its tables
// and whether it answered.
func (s *checker) doctorCatalog(ctx context.Context, cc *config.Catalog, selectors []string, rep *diff.Doctor) ([]string, bool) {
	add := func(f diff.DoctorFinding) {
		f.Catalog = cc.Name
		rep.Add(f)
	}
	limit := s.CatalogTimeout(cc.Name)
	cctx, cancel := bound.Call(bound.With(ctx, limit))
	tables, err := s.ListTables(cctx, cc.Name)
	cancel()
	reachable := err == nil
	typ := catalogs.Lookup(cc.Type)
	reach, auth := reachability(cc, len(tables), err, limit, catalogAuth(s, cc))
	add(reach)
	if reachable && typ.SharedStore {
		switch names, err := s.OtherCatalogNames(ctx, cc.Name); {
		case err != nil:
			add(diff.DoctorFinding{Check: "catalog names", Status: diff.DoctorWarn, Message: err.Error()})
		case len(names) > 0:
			msg, detail := diff.CatalogNamesShared(cc.Name, names)
			add(diff.DoctorFinding{Check: "catalog names", Status: diff.DoctorWarn, Message: msg, Fix: detail})
		}
	}
	base := config.ResolveWarehouse(cc.Warehouse, s.Config().Dir)
	add(auth)
	add(credentialSource(ctx, s, cc, base))
	var fsys iceio.IO

	var selected []string
	for _, addr := range tables {
		if len(selectors) == 0 || slices.ContainsFunc(selectors, func(p string) bool { return config.MatchPattern(p, addr) }) {
			selected = append(selected, addr)
		}
	}
	probeAt := tables
	if len(selected) > 0 {
		probeAt = selected
	}
	base, fsys, err = s.probeTarget(ctx, cc, base, probeAt)
	switch {
	case err != nil:
		add(diff.DoctorFinding{Check: "storage", Status: diff.DoctorFail, Message: err.Error()})
	case fsys == nil:
		add(diff.DoctorFinding{Check: "storage", Status: diff.DoctorWarn, Message: "not probed: " + base})
	default:
		for _, f := range probeStorage(fsys, base, s.Now) {
			add(f)
		}
	}

	for _, addr := range selected {
		for _, f := range s.doctorTable(ctx, addr) {
			add(f)
		}
	}
	return tables, reachable
}

// reachability is the "reachable" finding of catalog cc from its listing
// (n tables, or err within limit), and the catalog-auth finding auth
// becomes: a failure when the server answered and refused the login or
// the grant, as it was otherwise.
func reachability(cc *config.Catalog, n int, err error, limit time.Duration, auth diff.DoctorFinding) (diff.DoctorFinding, diff.DoctorFinding) {
	class := bound.Classify(err)
	switch {
	case err == nil:
		return diff.DoctorFinding{Check: "reachable", Status: diff.DoctorOK,
			Message: fmt.Sprintf("the %s catalog answered: %s", cc.Type, config.CountOf(n, "table", "tables"))}, auth
	case class == bound.ClassAuth || class == bound.ClassPermission:
		// The server answered: the login (or the grant) is what failed,
		// and the error says what to check.
		return diff.DoctorFinding{Check: "reachable", Status: diff.DoctorOK,
				Message: fmt.Sprintf("the %s catalog answered, and refused the request", cc.Type)},
			diff.DoctorFinding{Check: "catalog-auth", Status: diff.DoctorFail,
				Message: fmt.Sprintf("%s (%s)", trimCatalog(cc.Name, err), auth.Message)}
	case class == bound.ClassNotFound || class == bound.ClassServer || class == bound.ClassOther && isReached(err):
		return diff.DoctorFinding{Check: "reachable", Status: diff.DoctorFail,
			Message: fmt.Sprintf("the %s catalog answered with an error: %s", cc.Type, trimCatalog(cc.Name, err)),
			Fix:     bound.ClassHint(class)}, auth
	}
	fix := bound.ClassHint(class)
	typeFix := ""
	if f := catalogs.Lookup(cc.Type).UnreachableFix; f != nil {
		typeFix = f(cc)
	}
	switch {
	case typeFix != "":
		fix = typeFix
	case class != bound.ClassTLS:
		fix = "check the catalog's uri, that the server runs and that this machine can reach it (icewright.request-timeout sets the deadline)"
	}
	return diff.DoctorFinding{Check: "reachable", Status: diff.DoctorFail,
		Message: fmt.Sprintf("the %s catalog cannot be reached (deadline %s): %v", cc.Type, config.FormatDuration(limit), err),
		Fix:     fix}, auth
}

// probeTarget is where the storage probe goes and the IO it goes through:
// where icewright writes, the warehouse (base, resolved) when it is a storage
// location, else the first of tables' location, through that table's IO
// (vended credentials included). A REST catalog's warehouse is a name, or
// a location the server owns (an S3 table bucket refuses any key outside
// a table's), and a Hadoop catalog takes every directory of its warehouse
// for a namespace, so for those it is always a table's (whose
// _icewright_lock holds the leases anyway). With no IO and no error, the
// location is why there is nothing to probe.
func (s *checker) probeTarget(ctx context.Context, cc *config.Catalog, base string, tables []string) (string, iceio.IO, error) {
	why := catalogs.Lookup(cc.Type).WarehouseNotProbed
	if isLocation(base) && why == "" {
		props := maps.Clone(cc.Properties)
		if props == nil {
			props = map[string]string{}
		}
		fsys, err := iceio.LoadFS(ctx, props, base)
		if err != nil {
			return "", nil, fmt.Errorf("cannot open the storage of %s: %w", base, err)
		}
		return base, fsys, nil
	}
	if why == "" {
		why = "the warehouse is not a storage location"
	}
	if len(tables) == 0 {
		return "the catalog lists no table to probe under (" + why + ")", nil, nil
	}
	tbl, err := s.LoadTable(ctx, tables[0])
	if err != nil {
		return "", nil, fmt.Errorf("cannot load %s to probe under its location (%s): %w", tables[0], why, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("cannot open the storage of %s: %w", tbl.Location(), err)
	}
	return tbl.Location(), fsys, nil
}

// doctorTable observes one table as a plan that compacts it would, and
// reports its limits (diff.TableLimits).
func (s *checker) doctorTable(ctx context.Context, addr string) []diff.DoctorFinding {
	pol, ok := s.Config().Resolve(addr)
	if !ok {
		tbl, err := s.LoadTable(ctx, addr)
		if err != nil {
			return []diff.DoctorFinding{{Table: addr, Check: "load", Status: diff.DoctorFail, Message: err.Error()}}
		}
		pol = providers.UnmanagedPolicy(addr, tbl)
	}
	// The checks of a compaction are made whether or not the policy
	// compacts: doctor says what icewright could do. The orphan scan is left
	// out (it lists the whole location; plan and inspect report it).
	probe := *pol
	probe.Compaction.Declared = true
	probe.OrphanFiles.Declared = false
	o, err := s.ObserveState(ctx, &probe)
	if err != nil {
		return []diff.DoctorFinding{{Table: addr, Check: "load", Status: diff.DoctorFail, Message: err.Error()}}
	}
	defer o.Close()
	return diff.TableLimits(o.State)
}

// isLocation reports whether a resolved warehouse is a storage location
// (a URL iceberg-go opens an IO for) rather than a catalog's name for it.
func isLocation(w string) bool {
	scheme, _, ok := strings.Cut(w, "://")
	if !ok {
		return false
	}
	switch scheme {
	case "file", "s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs":
		return true
	}
	return false
}

// probeStorage writes, lists, reads and deletes one object,
// <base>/_icewright_lock/doctor-probe-<random>: the lease directory is icewright'
// own, never listed by the orphan sweep (store.LockDir), so a probe a
// failed delete leaves behind is harmless. The object's time in the store
// gives the clock skew.
func probeStorage(fsys iceio.IO, base string, now func() time.Time) []diff.DoctorFinding {
	var out []diff.DoctorFinding
	add := func(check, status, msg, fix string) {
		out = append(out, diff.DoctorFinding{Check: check, Status: status, Message: msg, Fix: fix})
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	dir := strings.TrimRight(base, "/") + "/" + store.LockDir
	p := dir + "/doctor-probe-" + hex.EncodeToString(b[:])
	content := []byte("icewright doctor probe\n")
	// Locally the write creates the missing directories; they are
	// removed again, each only while empty (a lease or a first table may
	// have appeared meanwhile).
	if l, ok := store.LocalPath(dir); ok {
		var created []string
		for d := l; ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); !store.IsNotExist(err) || d == filepath.Dir(d) {
				break
			}
			created = append(created, d)
		}
		defer func() {
			for _, d := range created {
				_ = os.Remove(d)
			}
		}()
	}

	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		add("write", diff.DoctorFail, fmt.Sprintf("storage %T cannot write", fsys), "")
		return out
	}
	before := now()
	if err := wfs.WriteFile(p, content); err != nil {
		add("write", diff.DoctorFail, fmt.Sprintf("cannot write a probe object under %s: %v", dir, err),
			"grant write (s3:PutObject or the store's equivalent) on the warehouse: every commit writes files there")
		return out
	}
	after := now()
	add("write", diff.DoctorOK, "wrote a probe object under "+dir, "")

	if names, err := listNames(fsys, dir); err != nil {
		add("list", diff.DoctorFail, fmt.Sprintf("cannot list %s: %v", dir, err),
			"grant list (s3:ListBucket or the store's equivalent) on the warehouse: the orphan sweep and the lease need it")
	} else if !slices.Contains(names, path.Base(p)) {
		add("list", diff.DoctorFail, fmt.Sprintf("the listing of %s does not show the probe object just written", dir),
			"the store's listings must be consistent with its writes for the orphan sweep to be safe")
	} else {
		add("list", diff.DoctorOK, "listed the probe object", "")
	}

	var mtime time.Time
	if f, err := fsys.Open(p); err != nil {
		add("read", diff.DoctorFail, fmt.Sprintf("cannot read the probe object: %v", err),
			"grant read (s3:GetObject or the store's equivalent) on the warehouse")
	} else {
		got, rerr := io.ReadAll(f)
		if st, err := f.Stat(); err == nil {
			mtime = st.ModTime()
		}
		_ = f.Close()
		switch {
		case rerr != nil:
			add("read", diff.DoctorFail, fmt.Sprintf("cannot read the probe object: %v", rerr), "grant read on the warehouse")
		case !bytes.Equal(got, content):
			add("read", diff.DoctorFail, fmt.Sprintf("the probe object reads back %d bytes, not the %d written", len(got), len(content)), "")
		default:
			add("read", diff.DoctorOK, "read the probe object back", "")
		}
	}
	if !mtime.IsZero() {
		out = append(out, clockFinding(mtime, before, after))
	}

	if err := fsys.Remove(p); err != nil {
		add("delete", diff.DoctorFail, fmt.Sprintf("cannot delete the probe object %s (it is left there, harmless; remove it by hand): %v", p, err),
			"grant delete (s3:DeleteObject or the store's equivalent) on the warehouse: expiry, the orphan sweep, the quarantine and the lease delete files")
		return out
	}
	if st, ok := fsys.(interface {
		Stat(string) (iofs.FileInfo, error)
	}); ok {
		if _, err := st.Stat(p); err == nil {
			add("delete", diff.DoctorFail, "the probe object is still there after its delete was accepted", "")
			return out
		}
	}
	add("delete", diff.DoctorOK, "deleted the probe object", "")
	return out
}

// clockFinding compares the store's time of the probe object with the
// local clock around its write (before..after): within that window, plus
// the store's one-second resolution, there is no skew to speak of.
func clockFinding(mtime, before, after time.Time) diff.DoctorFinding {
	var skew time.Duration
	switch {
	case mtime.Before(before.Add(-time.Second)):
		skew = mtime.Sub(before) // negative: the store is behind
	case mtime.After(after.Add(time.Second)):
		skew = mtime.Sub(after)
	}
	abs := max(skew, -skew)
	f := diff.DoctorFinding{Check: "clock", Status: diff.DoctorOK}
	dir := "ahead of"
	if skew < 0 {
		dir = "behind"
	}
	why := fmt.Sprintf("the orphan age guard compares the store's file times with this clock (warn above %s, fail above %s)", config.FormatDuration(ClockSkewWarn), config.FormatDuration(ClockSkewFail))
	switch {
	case abs > ClockSkewFail:
		f.Status = diff.DoctorFail
		f.Message = fmt.Sprintf("the store's clock is %s %s this machine's: %s", skewText(abs), dir, why)
		f.Fix = "synchronise the clocks (NTP) before running the orphan sweep"
	case abs > ClockSkewWarn:
		f.Status = diff.DoctorWarn
		f.Message = fmt.Sprintf("the store's clock is %s %s this machine's: %s", skewText(abs), dir, why)
		f.Fix = "synchronise the clocks (NTP)"
	default:
		f.Message = fmt.Sprintf("the store's clock agrees with this machine's within %s: %s", config.FormatDuration(ClockSkewWarn), why)
	}
	return f
}

// listNames lists the names of the objects directly under dir.
func listNames(fsys iceio.IO, dir string) ([]string, error) {
	lio, ok := fsys.(iceio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("storage %T cannot list", fsys)
	}
	var names []string
	err := lio.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, path.Base(p))
		}
		return nil
	})
	return names, err
}

// skewText is a skew for people: seconds are noise once it is days.
func skewText(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("about %d days", int(d.Hours()/24+0.5))
	}
	return d.Round(time.Second).String()
}

// trimCatalog is err without the `catalog "NAME": ` the session put in
// front: the doctor's line names the catalog already.
func trimCatalog(name string, err error) string {
	return strings.TrimPrefix(err.Error(), fmt.Sprintf("catalog %q: ", name))
}

// isReached says whether err is an answer of the server (an HTTP status).
func isReached(err error) bool {
	var re *bound.RemoteError
	return errors.As(err, &re) && re.Reached()
}
