package bound

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog/rest"
	"golang.org/x/oauth2"
)

// What a remote call did, so that its error says it (issue 43): the
// operation, the method and URL (no secret), the HTTP status and the
// server's own message. iceberg-go's REST catalog keeps none of that in its
// errors (a 404 reads "REST error", a 401 without a message reads nothing),
// so the transport icewright gives it (Transport) notes each exchange in
// the recorder the call's context carries, and Read (every catalog read)
// puts the last one in the error it returns.

// Exchange is one HTTP request and what came back of it.
type Exchange struct {
	Method string
	URL    string // without user info or query secrets
	Status int    // 0: no answer (headers never came)
	// Message is the server's error message: the Iceberg error's type and
	// message, an OAuth error and its description, or the first line of a
	// page that is neither.
	Message    string
	RetryAfter string
	// Redirected is the URL the client was sent on from, if any.
	Redirected string
}

type recorderKey struct{}

type recorder struct {
	mu   sync.Mutex
	last *Exchange
}

func (r *recorder) note(e *Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last != nil && e.Redirected == "" && r.last.Status >= 300 && r.last.Status < 400 && r.last.URL != e.URL {
		e.Redirected = r.last.URL
	}
	r.last = e
}

func (r *recorder) get() *Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	e := *r.last
	return &e
}

// Recording returns ctx with a fresh recorder and a function giving the
// last exchange of a request sent with ctx (nil if none was sent).
func Recording(ctx context.Context) (context.Context, func() *Exchange) {
	r := &recorder{}
	return context.WithValue(ctx, recorderKey{}, r), r.get
}

// Transport wraps an HTTP transport so that each request sent with a
// recording context (Recording) is noted: method, URL, status, and for an
// answer that is not a success, the server's message (the body is read up
// to 64 KiB and given back whole to the caller).
func Transport(inner http.RoundTripper) http.RoundTripper {
	return transport{inner: inner}
}

type transport struct{ inner http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec, _ := req.Context().Value(recorderKey{}).(*recorder)
	resp, err := t.inner.RoundTrip(req)
	if rec == nil {
		return resp, err
	}
	e := &Exchange{Method: req.Method, URL: RedactURL(req.URL)}
	if err == nil {
		e.Status = resp.StatusCode
		if resp.StatusCode >= 300 {
			e.RetryAfter = resp.Header.Get("Retry-After")
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
			if rerr == nil {
				e.Message = serverMessage(body)
			}
		}
	}
	rec.note(e)
	return resp, err
}

// RedactURL is u as it may be shown: no user info, and the values of query
// parameters that may carry a secret masked.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User("****")
	}
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			if secretParam(k) {
				q.Set(k, "****")
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

func secretParam(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"token", "secret", "key", "password", "credential", "signature", "sig"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// serverMessage reads an error body: the Iceberg REST error
// ({"error": {"message", "type", "code"}}), an OAuth error ({"error",
// "error_description"}), a flat {"message"}, or else the text's first line.
func serverMessage(body []byte) string {
	var doc struct {
		Error            json.RawMessage `json:"error"`
		ErrorDescription string          `json:"error_description"`
		Message          string          `json:"message"`
		Type             string          `json:"type"`
	}
	if json.Unmarshal(body, &doc) == nil {
		var ice struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		var code string
		switch {
		case json.Unmarshal(doc.Error, &ice) == nil && (ice.Message != "" || ice.Type != ""):
			return joinNonEmpty(": ", ice.Type, ice.Message)
		case json.Unmarshal(doc.Error, &code) == nil && code != "":
			return joinNonEmpty(": ", code, doc.ErrorDescription)
		case doc.Message != "" || doc.Type != "":
			return joinNonEmpty(": ", doc.Type, doc.Message)
		}
		return "" // JSON without a message
	}
	text := strings.TrimSpace(string(body))
	if i := strings.IndexAny(text, "\r\n"); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return text
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// Error classes, for the advice a failure gets (doctor).
const (
	ClassNetwork    = "network"
	ClassTLS        = "tls"
	ClassAuth       = "auth"
	ClassPermission = "permission"
	ClassNotFound   = "not found"
	ClassServer     = "server"
	ClassTimeout    = "timeout"
	ClassOther      = "other"
)

// RemoteError is a remote call's failure with what was sent and answered.
type RemoteError struct {
	Exchange
	// Class is one of the Class constants.
	Class string
	Err   error
}

func (e *RemoteError) Unwrap() error { return e.Err }

// Reached says whether the server answered: with an HTTP status, or
// (the OAuth token endpoint) with a refused login.
func (e *RemoteError) Reached() bool {
	return e.Status != 0 || e.Class == ClassAuth || e.Class == ClassPermission
}

func (e *RemoteError) Error() string {
	var b strings.Builder
	switch e.Class {
	case ClassAuth:
		b.WriteString("authentication failed: ")
	case ClassPermission:
		b.WriteString("not authorized: ")
	}
	fmt.Fprintf(&b, "%s %s", e.Method, e.URL)
	if e.Redirected != "" {
		fmt.Fprintf(&b, " (redirected from %s)", e.Redirected)
	}
	switch {
	case e.Status != 0 && e.Status < 300:
		fmt.Fprintf(&b, " answered %d %s, then its body stopped: %v", e.Status, http.StatusText(e.Status), e.Err)
	case e.Status != 0:
		fmt.Fprintf(&b, " answered %d %s", e.Status, http.StatusText(e.Status))
		msg := e.Message
		if msg == "" {
			msg = "(no message)"
		}
		fmt.Fprintf(&b, ": %s", msg)
		if e.RetryAfter != "" {
			fmt.Fprintf(&b, " (Retry-After: %s)", e.RetryAfter)
		}
	default:
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if hint := e.Hint(); hint != "" && (e.Class == ClassAuth || e.Class == ClassPermission) {
		fmt.Fprintf(&b, " (%s)", hint)
	}
	return b.String()
}

// Hint is what to check for the error's class.
func (e *RemoteError) Hint() string { return ClassHint(e.Class) }

// ClassHint is what to check for an error class.
func ClassHint(class string) string {
	switch class {
	case ClassNetwork:
		return "check the catalog's uri, that the server runs and that this machine can reach it"
	case ClassTLS:
		return "check the uri's scheme (http or https) and that the server's certificate is trusted here (rest.tls.skip-verify only for tests)"
	case ClassAuth:
		return "check the catalog's credential or token (an env() variable may be unset or stale) and oauth2-server-uri"
	case ClassPermission:
		return "the credential was accepted but may not do this: check its grants on the catalog, warehouse and namespace"
	case ClassNotFound:
		return "check the catalog's uri (path and prefix) and warehouse, and the table's name"
	case ClassServer:
		return "the catalog failed on its side: see its logs, and try again later"
	case ClassTimeout:
		return "the catalog did not answer in time: check that it runs and is not overloaded (icewright.request-timeout sets the deadline)"
	}
	return ""
}

// Explain turns err, a remote call's failure, into a RemoteError naming
// the last exchange (from Recording's function), if it can tell more than
// err does; otherwise err is returned as it is.
func Explain(err error, last *Exchange) error {
	if err == nil {
		return nil
	}
	var re *RemoteError
	if errors.As(err, &re) {
		return err
	}
	var oe *oauth2.RetrieveError
	if errors.As(err, &oe) && oe.Response != nil {
		e := &RemoteError{Class: ClassAuth, Err: err}
		e.Status = oe.Response.StatusCode
		if oe.Response.Request != nil {
			e.Method, e.URL = oe.Response.Request.Method, RedactURL(oe.Response.Request.URL)
		}
		e.Message = joinNonEmpty(": ", oe.ErrorCode, oe.ErrorDescription)
		if e.Message == "" {
			e.Message = serverMessage(oe.Body)
		}
		if e.Class = statusClass(e.Status); e.Class == ClassOther {
			e.Class = ClassAuth // 400 invalid_client, invalid_grant, ...
		}
		return e
	}
	class := Classify(err)
	if last == nil {
		var ue *url.Error
		if !errors.As(err, &ue) {
			return err
		}
		u, _ := url.Parse(ue.URL)
		last = &Exchange{Method: strings.ToUpper(ue.Op), URL: RedactURL(u)}
	}
	e := &RemoteError{Exchange: *last, Class: class, Err: err}
	var de *deadlineError
	switch {
	case last.Status >= 300:
		e.Class = statusClass(last.Status)
	case class != ClassTimeout && last.Status != 0:
		// A success whose body could not be read or decoded: the
		// error says what went wrong better than the status.
		return err
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			e.Err = ue.Err
		}
	}
	if e.Class == ClassTimeout && errors.As(err, &de) {
		e.Err = de
	}
	return e
}

func statusClass(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == 419:
		return ClassAuth
	case status == http.StatusForbidden:
		return ClassPermission
	case status == http.StatusNotFound:
		return ClassNotFound
	case status >= 500:
		return ClassServer
	}
	return ClassOther
}

// Classify says which class of failure err is.
func Classify(err error) string {
	var (
		re   *RemoteError
		oe   *oauth2.RetrieveError
		ue   x509.UnknownAuthorityError
		he   x509.HostnameError
		ce   x509.CertificateInvalidError
		rhe  tls.RecordHeaderError
		ne   net.Error
		ope  *net.OpError
		dnse *net.DNSError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &re):
		return re.Class
	case errors.As(err, &oe):
		if oe.Response != nil && oe.Response.StatusCode == http.StatusForbidden {
			return ClassPermission
		}
		return ClassAuth
	case errors.Is(err, rest.ErrOAuthError):
		// iceberg-go's token exchange failed (its error keeps the OAuth
		// error code and description, not the status).
		return ClassAuth
	case errors.As(err, &ue), errors.As(err, &he), errors.As(err, &ce), errors.As(err, &rhe),
		strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "x509: "):
		return ClassTLS
	case errors.Is(err, ErrDeadline), errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	case errors.As(err, &dnse), errors.As(err, &ope):
		return ClassNetwork
	}
	return ClassOther
}
