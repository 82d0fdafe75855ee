package providers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/apache/iceberg-go/utils"

	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/providers/internal/bound"
)

// TestStallClient: an attempt that gets nothing for the timeout fails as a
// timeout (which the SDK's retryer retries); a slow transfer that keeps
// moving is not cut, whatever its total time.
func TestStallClient(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stall":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/slow":
			for range 8 {
				_, _ = w.Write([]byte("x"))
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
		case "/stall-body":
			_, _ = w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &stallClient{inner: srv.Client(), timeout: 300 * time.Millisecond}
	get := func(p string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+p, nil)
		return c.Do(req)
	}

	start := time.Now()
	_, err := get("/stall")
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() || time.Since(start) > 3*time.Second {
		t.Fatalf("stalled request: %v after %s", err, time.Since(start))
	}

	resp, err := get("/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "xxxxxxxx" {
		t.Fatalf("slow but moving transfer: %q %v", b, err)
	}

	resp, err = get("/stall-body")
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.As(err, &te) || !te.Timeout() || time.Since(start) > 3*time.Second {
		t.Fatalf("body stalled: %v after %s", err, time.Since(start))
	}
}

// TestWithStorageLimits: the context carries the S3 configuration with the
// catalog's timeout and the bounded retryer.
func TestWithStorageLimits(t *testing.T) {
	cfg := &config.Config{Catalogs: []*config.Catalog{{Name: "a", Type: "sql", Properties: map[string]string{
		RequestTimeoutProperty: "2s", "s3.region": "eu-west-1"}}}}
	s := Open(cfg, Options{})
	ctx := s.WithStorageLimits(context.Background())
	ac := utils.GetAwsConfig(ctx)
	if ac == nil {
		t.Fatal("no aws config in the context")
	}
	sc, ok := ac.HTTPClient.(*stallClient)
	if !ok || sc.timeout != 2*time.Second {
		t.Fatalf("http client %T %+v", ac.HTTPClient, ac.HTTPClient)
	}
	if ac.Retryer == nil || ac.Retryer().MaxAttempts() != storageMaxAttempts {
		t.Fatal("retryer not bounded")
	}
	if d := s.catalogTimeout("a"); d != 2*time.Second*storageMaxAttempts {
		t.Fatalf("catalog timeout %s", d)
	}
	if d := bound.Of(ctx); d != 2*time.Second*storageMaxAttempts {
		t.Fatalf("catalog call bound %s, want the catalog's 4 x 2s", d)
	}
	if s.WithStorageLimits(ctx) != ctx {
		t.Fatal("wrapped twice")
	}
}
