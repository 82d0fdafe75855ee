package reconcile

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the reconciler's endpoints:
//
//	GET  /metrics              Prometheus metrics
//	GET  /healthz              200 while the process serves
//	GET  /readyz               200 once the first listing is done, else 503
//	GET  /status               every table's TableStatus, as JSON
//	POST /trigger?table=ADDR   a writer's hint that ADDR committed (202; 404 for a
//	                           table not managed; the table is the truth, the hint
//	                           only brings its reconcile forward)
func (r *Reconciler) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(r.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !r.Ready() {
			http.Error(w, "not ready: the tables are being listed", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(struct {
			Ready  bool          `json:"ready"`
			Tables []TableStatus `json:"tables"`
		}{r.Ready(), r.Status()})
	})
	mux.HandleFunc("POST /trigger", func(w http.ResponseWriter, req *http.Request) {
		addr := req.URL.Query().Get("table")
		if addr == "" {
			http.Error(w, "trigger needs ?table=CATALOG.NAMESPACE.TABLE", http.StatusBadRequest)
			return
		}
		if !r.Trigger(addr) {
			http.Error(w, fmt.Sprintf("table %q is not managed by this reconciler (a new table is found at the next listing)", addr), http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "%s: reconcile within %s\n", addr, r.opts.Debounce)
	})
	return mux
}
