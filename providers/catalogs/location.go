package catalogs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// A table's metadata location without its metadata (issue 44): a REST
// catalog's load-table answer carries "metadata-location" beside the whole
// metadata JSON, which iceberg-go's LoadTable parses (a reconcile pass over
// a REST fleet was mostly that parse). MetadataLocation sends the same
// request through iceberg-go itself, so that the catalog's own session
// makes it (the /v1/config answer's URI and prefix, the namespace encoding
// and separator, the headers, OAuth or SigV4), and the transport that
// icewright gives the REST catalog (restTransport) takes the answer before
// iceberg-go reads it: it decodes "metadata-location" with a streaming
// decoder, scanning the rest (the metadata too) without building it, and
// ends iceberg-go's call with errLocationRead. Only a 200 answer to a GET
// of the table's path is taken; every other answer goes to iceberg-go as
// it came (its errors, bound.Read's retries).

// ErrLocationUnsure is MetadataLocation's answer when the load-table answer
// came but does not say one location for certain: no "metadata-location",
// not a string, empty, twice or in another case (encoding/json, which
// iceberg-go decodes with, would match it), or not one JSON object. The
// caller loads the table instead (its error says what is wrong), so that a
// doubtful location never stands for the table's.
var ErrLocationUnsure = errors.New("the catalog's answer does not say the metadata location for certain")

// errLocationRead ends the iceberg-go call whose answer the transport read.
var errLocationRead = errors.New("metadata location read; the rest of the answer skipped")

type locationKey struct{}

// locationProbe is one MetadataLocation call: the table it asks for (the
// last segment of the request's path) and what the transport read.
type locationProbe struct {
	name string

	mu   sync.Mutex
	done bool
	loc  string
	ok   bool
}

// MetadataLocation is the location of the table's current metadata file,
// as its catalog says it now. For a REST catalog opened by Open, it is the
// load-table answer's "metadata-location", the metadata itself not parsed;
// for any other catalog (or if iceberg-go's request was not the one
// expected, so the answer was not taken), the table's, loaded as usual.
// ErrLocationUnsure: the answer came but says no location for certain.
// ctx bounds the call (the caller's deadline: bound.Read).
func MetadataLocation(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (string, error) {
	if len(ident) == 0 {
		return "", errors.New("empty table identifier")
	}
	p := &locationProbe{name: ident[len(ident)-1]}
	tbl, err := cat.LoadTable(context.WithValue(ctx, locationKey{}, p), ident)
	if err == nil {
		return tbl.MetadataLocation(), nil
	}
	if !errors.Is(err, errLocationRead) {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done || !p.ok {
		return "", ErrLocationUnsure
	}
	return p.loc, nil
}

// locationTransport takes the answer of a MetadataLocation call's request
// (above); every other request passes through.
type locationTransport struct{ inner http.RoundTripper }

func (t locationTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p, _ := req.Context().Value(locationKey{}).(*locationProbe)
	if p == nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/tables/"+p.name) {
		return t.inner.RoundTrip(req)
	}
	resp, err := t.inner.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	defer resp.Body.Close()
	body := &readErr{r: resp.Body}
	loc, ok := decodeMetadataLocation(body)
	if body.err != nil {
		// The answer broke off (a reset connection, the deadline): the
		// read's error, which bound.Read may repeat.
		return nil, body.err
	}
	p.mu.Lock()
	p.done, p.loc, p.ok = true, loc, ok
	p.mu.Unlock()
	return nil, errLocationRead
}

// readErr remembers the first error of its reader other than io.EOF, so
// that a broken answer is told from a malformed one.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// decodeMetadataLocation reads a load-table answer to its end and says its
// "metadata-location": ok only when the answer is one JSON object with
// that key exactly once, as a non-empty string, and no other key that
// encoding/json would take for it (a case-insensitive match). Every other
// value is scanned without being built (skipValue).
func decodeMetadataLocation(r io.Reader) (loc string, ok bool) {
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	found := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := tok.(string)
		switch {
		case key == "metadata-location":
			v, err := dec.Token()
			s, isString := v.(string)
			if err != nil || !isString {
				return "", false
			}
			loc, found = s, found+1
		case strings.EqualFold(key, "metadata-location"):
			return "", false
		default:
			if err := dec.Decode(&skipValue{}); err != nil {
				return "", false
			}
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return "", false
	}
	// Nothing after the object (iceberg-go refuses trailing JSON).
	if _, err := dec.Token(); err != io.EOF {
		return "", false
	}
	return loc, found == 1 && loc != ""
}

// skipValue is a JSON value that the decoder checks and scans but does not
// build: its UnmarshalJSON keeps nothing.
type skipValue struct{}

func (skipValue) UnmarshalJSON([]byte) error { return nil }
