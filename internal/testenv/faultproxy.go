package testenv

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// FaultProxy is an HTTP proxy on an ephemeral loopback port in front of a
// real server (the shared S3 server, usually), which injects the faults an
// object store shows in production: an error answer (500, 503 SlowDown,
// 403) on the Nth matching request, a listing page cut short, a connection
// that stalls. Everything that no fault matches is forwarded unchanged, so
// the objects a test finds in the bucket afterwards are the real ones.
//
// The shared servers must never be stopped by a test; a stalled server is
// simulated here instead, per request, for this test's client only.
//
// S3 requests are signed over the Host header, so the proxy forwards the
// client's Host as is (the upstream checks the signature against it).
type FaultProxy struct {
	URL string // http://127.0.0.1:PORT

	t        testing.TB
	upstream string
	client   *http.Client

	mu      sync.Mutex
	faults  []*faultRule
	seen    []Seen
	stalled chan struct{} // closed by Release: every request stalled so far returns
}

// Fault says which requests fail and how. Method, Path and Query narrow the
// match (empty: any); Path and Query are substrings of the URL path (as the
// client sent it, decoded) and of the raw query.
type Fault struct {
	Method string
	Path   string
	Query  string
	// Nth fails only the Nth matching request (1-based); 0 fails every one.
	// Times, with Nth, fails that many matching requests from the Nth on.
	Nth   int
	Times int

	// One of: Status (with the S3 error Code, e.g. "SlowDown"), Stall (hold
	// the request until Release, the client gives up, or the test ends),
	// Cut (forward it, then send half the answer's body and close).
	Status int
	Code   string
	Stall  bool
	Cut    bool
	// Then, when set, runs when the fault matches, before the request is
	// forwarded (without Status, Stall or Cut, it is forwarded unchanged):
	// a test pauses the real server there, mid-run, at a known request.
	Then func()
	// Answer, when set, answers the request instead of the server: a test
	// stands in for part of the store (a DeleteObjects that deletes some
	// keys for real, through the test's own client, and reports the
	// others failed), which no status code can express.
	Answer func(w http.ResponseWriter, r *http.Request)
}

// Seen is one request the proxy received, whether a fault answered it, and
// Broken: why the upstream's answer could not be passed on whole (the
// upstream unreachable, or its answer broken off: a shared server under
// load), so that a test can tell the upstream's failure from its fault's.
type Seen struct {
	Method, Path, Query string
	Faulted             bool
	Broken              string
}

type faultRule struct {
	Fault
	matched int
}

// StartFaultProxy starts a proxy to upstream (http://host:port), closed
// when t ends.
func StartFaultProxy(t testing.TB, upstream string) *FaultProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	p := &FaultProxy{
		URL: "http://" + l.Addr().String(), t: t, upstream: strings.TrimSuffix(upstream, "/"),
		client:  &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}},
		stalled: make(chan struct{}),
	}
	srv := &http.Server{Handler: p}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		p.Release()
		_ = srv.Close()
		p.client.CloseIdleConnections()
	})
	return p
}

// Add installs a fault; faults are tried in the order added.
func (p *FaultProxy) Add(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, &faultRule{Fault: f})
}

// Clear removes every fault (stalled requests stay stalled until Release).
func (p *FaultProxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// Release lets every stalled request go (each then fails with a 503). A
// Stall fault added afterwards stalls again.
func (p *FaultProxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.stalled)
	p.stalled = make(chan struct{})
}

// Requests returns the requests seen so far matching method and a path
// substring (empty: any).
func (p *FaultProxy) Requests(method, path string) []Seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Seen
	for _, s := range p.seen {
		if (method == "" || s.Method == method) && strings.Contains(s.Path, path) {
			out = append(out, s)
		}
	}
	return out
}

// Faulted counts the requests a fault answered.
func (p *FaultProxy) Faulted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, s := range p.seen {
		if s.Faulted {
			n++
		}
	}
	return n
}

// pick returns the fault for r, counting the match, or nil, and the
// index of r in seen.
func (p *FaultProxy) pick(r *http.Request) (*Fault, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var hit *Fault
	for _, f := range p.faults {
		if f.Method != "" && f.Method != r.Method || !strings.Contains(r.URL.Path, f.Path) || !strings.Contains(r.URL.RawQuery, f.Query) {
			continue
		}
		f.matched++
		times := max(f.Times, 1)
		if f.Nth == 0 || f.matched >= f.Nth && f.matched < f.Nth+times {
			ff := f.Fault
			hit = &ff
			break
		}
	}
	p.seen = append(p.seen, Seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Faulted: hit != nil})
	return hit, len(p.seen) - 1
}

// broken notes on seen[i] why the upstream's answer did not pass whole.
func (p *FaultProxy) broken(i int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[i].Broken = err.Error()
}

func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, seen := p.pick(r)
	if f != nil && f.Then != nil {
		f.Then()
	}
	switch {
	case f != nil && f.Answer != nil:
		f.Answer(w, r)
		return
	case f != nil && f.Stall:
		// Read nothing more and answer nothing, as a stopped process whose
		// kernel still accepts connections.
		p.mu.Lock()
		released := p.stalled
		p.mu.Unlock()
		select {
		case <-released:
		case <-r.Context().Done():
		}
		s3Error(w, http.StatusServiceUnavailable, "ServiceUnavailable", "stalled request released")
		return
	case f != nil && f.Status != 0:
		_, _ = io.Copy(io.Discard, r.Body)
		s3Error(w, f.Status, f.Code, "injected by the test's fault proxy")
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), r.Body)
	if err != nil {
		s3Error(w, http.StatusBadGateway, "InternalError", err.Error())
		return
	}
	out.Header = r.Header.Clone()
	out.Host = r.Host
	out.ContentLength = r.ContentLength
	if r.ContentLength == 0 {
		out.Body = nil
	}
	resp, err := p.client.Do(out)
	if err != nil {
		p.broken(seen, err)
		s3Error(w, http.StatusBadGateway, "InternalError", err.Error())
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	if f != nil && f.Cut {
		body, _ := io.ReadAll(resp.Body)
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body[:len(body)/2])
		// Close the connection mid-body: the client sees an unexpected EOF.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
			}
		}
		return
	}
	w.WriteHeader(resp.StatusCode)
	if _, err := io.Copy(w, resp.Body); err != nil {
		p.broken(seen, err)
	}
}

func s3Error(w http.ResponseWriter, status int, code, msg string) {
	if code == "" {
		code = http.StatusText(status)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<Error><Code>%s</Code><Message>%s</Message></Error>", code, msg)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", fmt.Sprint(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// Through returns e with its endpoint replaced by the proxy's.
func (e S3Env) Through(p *FaultProxy) S3Env {
	e.Endpoint = p.URL
	return e
}

// DeleteObjectsFailing is a Fault.Answer for S3 DeleteObjects that stands
// in for a store failing part of a batch: each key fail picks (by its
// position in the request) is reported failed with code and stays in the
// bucket; every other key is deleted for real through remove (the test's
// direct client, given s3://bucket/key) and is not mentioned (quiet mode).
func DeleteObjectsFailing(t testing.TB, bucket string, remove func(loc string) error, fail func(i int, key string) bool, code string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Objects []struct {
				Key string `xml:"Key"`
			} `xml:"Object"`
		}
		if err := xml.Unmarshal(body, &req); err != nil {
			t.Errorf("DeleteObjects body: %v", err)
		}
		var out bytes.Buffer
		out.WriteString(`<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
		for i, o := range req.Objects {
			if !fail(i, o.Key) {
				if err := remove("s3://" + bucket + "/" + o.Key); err != nil {
					t.Errorf("delete %s: %v", o.Key, err)
				}
				continue
			}
			out.WriteString("<Error><Key>")
			_ = xml.EscapeText(&out, []byte(o.Key))
			fmt.Fprintf(&out, "</Key><Code>%s</Code><Message>injected by the test's fault proxy</Message></Error>", code)
		}
		out.WriteString("</DeleteResult>")
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write(out.Bytes())
	}
}

// DeleteRequests counts the S3 deletes the proxy saw: DeleteObjects
// requests (POST ?delete, one per batch, each attempt) and single DELETEs.
func (p *FaultProxy) DeleteRequests() (batches, singles int) {
	for _, s := range p.Requests("", "") {
		switch {
		case s.Method == http.MethodPost && strings.Contains(s.Query, "delete"):
			batches++
		case s.Method == http.MethodDelete:
			singles++
		}
	}
	return batches, singles
}
