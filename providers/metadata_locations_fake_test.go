package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/catalogs"
)

// fakeREST is a REST catalog of a few tables in namespaces of one level,
// each table answering its load as its behaviour says, counting the loads
// of each.
type fakeREST struct {
	t      *testing.T
	meta   []byte                       // a valid metadata JSON
	tables map[string]map[string]string // namespace → table → behaviour
	order  []string                     // namespaces, in listing order

	mu    sync.Mutex
	loads map[string]int // "ns/table" → load requests
}

func newFakeREST(t *testing.T, tables map[string]map[string]string) (*fakeREST, *httptest.Server) {
	md, err := table.NewMetadata(lakehouse.EventsSchema(), iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "s3://bucket/t", nil)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeREST{t: t, meta: meta, tables: tables, loads: map[string]int{}}
	for ns := range tables {
		f.order = append(f.order, ns)
	}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

// fakeLocation is the metadata location the fake says for a table: one of
// its own, so that a location read for another table shows.
func fakeLocation(ns, name string) string {
	return "s3://bucket/" + url.PathEscape(ns) + "/" + url.PathEscape(name) + "/metadata/00001-x.metadata.json"
}

func (f *fakeREST) serve(w http.ResponseWriter, r *http.Request) {
	// The path's segments, each unescaped once (a namespace's levels are
	// joined by the unit separator).
	var segs []string
	for _, s := range strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/v1/"), "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		segs = append(segs, u)
	}
	switch {
	case r.Method == http.MethodGet && len(segs) == 1 && segs[0] == "config":
		fmt.Fprint(w, `{"defaults":{},"overrides":{}}`)
	case r.Method == http.MethodGet && len(segs) == 1 && segs[0] == "namespaces":
		var ns [][]string
		if r.URL.Query().Get("parent") == "" {
			for _, n := range f.order {
				ns = append(ns, []string{n})
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"namespaces": ns})
	case r.Method == http.MethodGet && len(segs) == 3 && segs[0] == "namespaces" && segs[2] == "tables":
		type ident struct {
			Namespace []string `json:"namespace"`
			Name      string   `json:"name"`
		}
		ids := []ident{}
		for name := range f.tables[segs[1]] {
			ids = append(ids, ident{[]string{segs[1]}, name})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"identifiers": ids})
	case r.Method == http.MethodGet && len(segs) == 4 && segs[0] == "namespaces" && segs[2] == "tables":
		ns, name := segs[1], segs[3]
		behaviour, ok := f.tables[ns][name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"no table %q in %q","type":"NoSuchTableException","code":404}}`, name, ns)
			return
		}
		f.mu.Lock()
		f.loads[ns+"/"+name]++
		f.mu.Unlock()
		f.answer(w, r, ns, name, behaviour)
	default:
		http.Error(w, "not in the fake: "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
	}
}

func (f *fakeREST) answer(w http.ResponseWriter, r *http.Request, ns, name, behaviour string) {
	loc := fakeLocation(ns, name)
	switch behaviour {
	case "ok":
		fmt.Fprintf(w, `{"metadata-location":%q,"metadata":%s,"config":{}}`, loc, f.meta)
	case "late": // the location after the metadata
		fmt.Fprintf(w, `{"metadata":%s,"config":{"k":"v"},"metadata-location":%q}`, f.meta, loc)
	case "unparsable": // metadata that iceberg-go refuses
		fmt.Fprintf(w, `{"metadata-location":%q,"metadata":{"format-version":99,"table-uuid":"nope"}}`, loc)
	case "twice": // iceberg-go takes the last; the reader is unsure
		fmt.Fprintf(w, `{"metadata-location":"s3://bucket/first.json","metadata":%s,"metadata-location":%q}`, f.meta, loc)
	case "fail":
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"boom","type":"ServerError","code":500}}`)
	case "hang":
		<-r.Context().Done()
	case "cut": // half the answer, then the connection closes
		body := fmt.Sprintf(`{"metadata":%s,"metadata-location":%q}`, f.meta, loc)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Error(err)
			return
		}
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:len(body)/2])
		_ = buf.Flush()
		_ = conn.Close()
	default:
		f.t.Errorf("behaviour %q", behaviour)
	}
}

func (f *fakeREST) loadsOf(ns, name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads[ns+"/"+name]
}

func fakeRESTSession(t *testing.T, uri string) *Session {
	cfg := &config.Config{Dir: t.TempDir(), Catalogs: []*config.Catalog{{Name: "fake", Type: "rest", URI: uri,
		Properties: map[string]string{RequestTimeoutProperty: "100ms"}}}}
	sess := Open(cfg, Options{})
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// TestMetadataLocationRESTRead: a REST table's metadata location is its
// load answer's, read in one request per table, for escaped names too (a
// namespace level with a dot, a space, an escaped slash, non-ASCII, two
// levels; a table with '#' and a space), and equal to the location
// iceberg-go's LoadTable gives; the metadata is not parsed (a table whose
// metadata iceberg-go refuses still says its location); an answer that
// does not say one location for certain is loaded by iceberg-go instead,
// whose location is the answer's last. The session's path (by address)
// says the same for every name an address can hold (not a level with a
// dot: config.SplitLevels).
func TestMetadataLocationRESTRead(t *testing.T) {
	type tbl struct {
		ident     table.Identifier
		behaviour string
	}
	all := []tbl{
		{table.Identifier{"plain", "ok"}, "ok"},
		{table.Identifier{"plain", "late"}, "late"},
		{table.Identifier{"plain", "unparsable"}, "unparsable"},
		{table.Identifier{"plain", "twice"}, "twice"},
		{table.Identifier{"a.b", "t#1"}, "ok"},
		{table.Identifier{"a.b", "x y"}, "late"},
		{table.Identifier{"sp ace%2F", "t"}, "ok"},
		{table.Identifier{"ünï", "é"}, "ok"},
		{table.Identifier{"two", "levels", "t"}, "ok"},
	}
	tables := map[string]map[string]string{}
	for _, tb := range all {
		ns := strings.Join(tb.ident[:len(tb.ident)-1], "\x1f")
		if tables[ns] == nil {
			tables[ns] = map[string]string{}
		}
		tables[ns][tb.ident[len(tb.ident)-1]] = tb.behaviour
	}
	f, srv := newFakeREST(t, tables)
	sess := fakeRESTSession(t, srv.URL)
	ctx := context.Background()
	cat, err := sess.Catalog(ctx, "fake")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rest.NewCatalog(ctx, "plain", srv.URL) // iceberg-go's own transport: no read
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range all {
		ns, name := strings.Join(tb.ident[:len(tb.ident)-1], "\x1f"), tb.ident[len(tb.ident)-1]
		want := fakeLocation(ns, name)
		before := f.loadsOf(ns, name)
		got, err := catalogs.MetadataLocation(ctx, cat, tb.ident)
		switch {
		case tb.behaviour == "twice":
			if !errors.Is(err, catalogs.ErrLocationUnsure) {
				t.Errorf("%q: %q, %v; want unsure", tb.ident, got, err)
			}
		case err != nil || got != want:
			t.Errorf("%q: %q, %v; want %q", tb.ident, got, err, want)
		}
		if n := f.loadsOf(ns, name) - before; n != 1 {
			t.Errorf("%q: %d load requests, want 1", tb.ident, n)
		}

		loaded, err := plain.LoadTable(ctx, tb.ident)
		if tb.behaviour == "unparsable" {
			if err == nil {
				t.Errorf("%q: iceberg-go loaded unparsable metadata", tb.ident)
			}
		} else if err != nil || loaded.MetadataLocation() != want {
			t.Errorf("%q: iceberg-go's load: %v, %v; want %q", tb.ident, loaded, err, want)
		}

		if strings.Contains(strings.Join(tb.ident, ""), ".") {
			continue // no address holds it
		}
		addr := joinAddress("fake", tb.ident)
		before = f.loadsOf(ns, name)
		got, err = sess.metadataLocation(ctx, addr)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", addr, got, err, want)
		}
		// One request; two when unsure (the read, then iceberg-go's load).
		wantLoads := 1
		if tb.behaviour == "twice" {
			wantLoads = 2
		}
		if n := f.loadsOf(ns, name) - before; n != wantLoads {
			t.Errorf("%s: %d load requests, want %d", addr, n, wantLoads)
		}
	}
}

// TestMetadataLocationRESTFaults: a table whose load answers 500, hangs, or
// breaks off mid-answer has no location ("" in MetadataLocations: the
// reconciler observes it), after bounded attempts each under its deadline,
// and the other tables of the catalog still have theirs.
func TestMetadataLocationRESTFaults(t *testing.T) {
	tables := map[string]map[string]string{"lake": {"ok": "ok", "fail": "fail", "hang": "hang", "cut": "cut"}}
	f, srv := newFakeREST(t, tables)
	sess := fakeRESTSession(t, srv.URL)
	ctx := context.Background()
	start := time.Now()
	locs, err := sess.MetadataLocations(ctx, "fake")
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"fake.lake.ok": fakeLocation("lake", "ok"), "fake.lake.fail": "", "fake.lake.hang": "", "fake.lake.cut": ""}
	if fmt.Sprint(locs) != fmt.Sprint(want) {
		t.Errorf("locations:\n got %v\nwant %v", locs, want)
	}
	// Each attempt is bounded by the catalog's timeout (100 ms a request,
	// 400 ms a catalog call), three attempts with 200 and 400 ms between.
	if took > 10*time.Second {
		t.Errorf("took %s", took)
	}
	for _, name := range []string{"fail", "hang", "cut"} {
		if n := f.loadsOf("lake", name); n != 3 {
			t.Errorf("%s: %d load requests, want 3 (bounded retries)", name, n)
		}
	}
	_, err = sess.metadataLocation(ctx, "fake.lake.hang")
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("a hanging load: %v, want the deadline's error", err)
	}
	_, err = sess.metadataLocation(ctx, "fake.lake.fail")
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("a failing load: %v, want its 500", err)
	}
	if _, err := sess.metadataLocation(ctx, "fake.lake.gone"); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("a table the catalog does not have: %v", err)
	}
}
