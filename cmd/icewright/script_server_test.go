package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// restserver VAR MODE starts a REST catalog server that misbehaves as MODE
// says, for the life of the script, and sets $VAR to its URL. The child
// icewright reaches it as a user's would (issue 43):
//
//	hang        accepts, never answers (no headers)
//	hang-body   answers 200 and half a body, then nothing
//	404         an Iceberg error: no such warehouse
//	401         an Iceberg error: NotAuthorizedException
//	401-empty   401 with an empty Iceberg error (no message)
//	oauth       the token endpoint answers 401 invalid_client (OAuth body)
//	403         an Iceberg error: ForbiddenException
//	500         a non-JSON error page
//	503         503 with Retry-After: 120
//	redirect    302 to a path that answers 404 with a text page
//	tls         an HTTPS server whose certificate is not trusted
func cmdRESTServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: restserver VAR MODE")
	}
	done := make(chan struct{})
	iceberg := func(w http.ResponseWriter, status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"code":%d}}`, msg, typ, status)
	}
	wait := func(r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}
	mode := args[1]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode {
		case "hang":
			wait(r)
		case "hang-body":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, `{"defaults": {`)
			w.(http.Flusher).Flush()
			wait(r)
		case "404":
			iceberg(w, 404, "NoSuchWarehouseException", "Warehouse s3://nowhere does not exist")
		case "401":
			iceberg(w, 401, "NotAuthorizedException", "Token expired")
		case "401-empty":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{}}`)
		case "oauth":
			if strings.HasSuffix(r.URL.Path, "/oauth/tokens") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(401)
				fmt.Fprint(w, `{"error":"invalid_client","error_description":"Client authentication failed"}`)
				return
			}
			iceberg(w, 401, "NotAuthorizedException", "no token")
		case "403":
			iceberg(w, 403, "ForbiddenException", "principal etl may not read warehouse lake")
		case "500":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(500)
			fmt.Fprint(w, "<html><body>Internal Server Error</body></html>\n")
		case "503":
			w.Header().Set("Retry-After", "120")
			iceberg(w, 503, "ServiceUnavailableException", "catalog is restarting")
		case "redirect":
			if !strings.HasPrefix(r.URL.Path, "/moved/") {
				http.Redirect(w, r, "/moved"+r.URL.RequestURI(), http.StatusFound)
				return
			}
			w.WriteHeader(404)
			fmt.Fprint(w, "404 page not found\n")
		case "tls":
			fmt.Fprint(w, "{}")
		default:
			ts.Fatalf("restserver: unknown mode %q", mode)
		}
	})
	var srv *httptest.Server
	if mode == "tls" {
		srv = httptest.NewUnstartedServer(h)
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
		srv.StartTLS()
	} else {
		srv = httptest.NewServer(h)
	}
	ts.Defer(func() {
		close(done)
		srv.CloseClientConnections()
		srv.Close()
	})
	ts.Setenv(args[0], srv.URL)
}
