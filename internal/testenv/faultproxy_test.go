package testenv

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestFaultProxyNotesBrokenUpstream: an answer the upstream breaks off is
// passed on broken and noted on the request (Seen.Broken), so a test can
// tell the upstream's failure from its own fault's; a whole answer is not.
func TestFaultProxyNotesBrokenUpstream(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/whole" {
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		}
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"metadata":`)
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
			}
		}
	}))
	defer up.Close()
	p := StartFaultProxy(t, up.URL)
	for _, path := range []string{"/whole", "/broken"} {
		resp, err := http.Get(p.URL + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		_, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if path == "/broken" && rerr == nil {
			t.Errorf("%s: the client read a whole answer", path)
		}
	}
	if s := p.Requests("GET", "/whole"); len(s) != 1 || s[0].Broken != "" {
		t.Errorf("whole answer noted as %+v", s)
	}
	if s := p.Requests("GET", "/broken"); len(s) != 1 || s[0].Broken == "" || s[0].Faulted {
		t.Errorf("broken answer noted as %+v, want Broken set, not Faulted", s)
	}
}
