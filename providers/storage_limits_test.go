package providers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/utils"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/internal/bound"
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
	c := &bound.StallClient{Inner: srv.Client(), Timeout: 300 * time.Millisecond}
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

// TestStallClientBreaker: with a breaker in the request's context, stalls
// in a row trip it (an answer between them does not), an attempt in flight
// is cut when it trips, and no later attempt reaches the server; a
// request without the breaker still goes.
func TestStallClientBreaker(t *testing.T) {
	release := make(chan struct{})
	var reached atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.URL.Path == "/ok" {
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &bound.StallClient{Inner: srv.Client(), Timeout: 300 * time.Millisecond}
	ctx := bound.WithBreaker(bound.WithStallLimit(context.Background(), 2))
	get := func(ctx context.Context, p string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+p, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(ctx, "/stall"); bound.Stop(ctx) != nil || err == nil {
		t.Fatalf("one stall: %v, breaker %v", err, bound.Stop(ctx))
	}
	if err := get(ctx, "/ok"); err != nil {
		t.Fatal(err)
	}
	// Two at once: the second stall trips the breaker; a third attempt,
	// in flight with a longer wait, is cut at that moment.
	cut := make(chan error, 1)
	slow := &bound.StallClient{Inner: srv.Client(), Timeout: time.Hour}
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/long", nil)
		_, err := slow.Do(req)
		cut <- err
	}()
	_ = get(ctx, "/stall")
	if err := get(ctx, "/stall"); !errors.Is(bound.Stop(ctx), bound.ErrUnresponsive) {
		t.Fatalf("two stalls in a row: %v, breaker %v", err, bound.Stop(ctx))
	}
	select {
	case err := <-cut:
		if !errors.Is(err, bound.ErrUnresponsive) {
			t.Errorf("the attempt in flight failed with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the attempt in flight was not cut")
	}
	before := reached.Load()
	if err := get(ctx, "/ok"); !errors.Is(err, bound.ErrUnresponsive) {
		t.Errorf("an attempt after the trip: %v", err)
	}
	if n := reached.Load() - before; n != 0 {
		t.Errorf("%d requests reached the server after the trip", n)
	}
	if err := get(context.Background(), "/ok"); err != nil {
		t.Errorf("a request of another scope: %v", err)
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
	sc, ok := ac.HTTPClient.(*bound.StallClient)
	if !ok || sc.Timeout != 2*time.Second {
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
