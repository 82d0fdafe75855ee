package objdel

import (
	"context"
	"fmt"
	"strings"
	"testing"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/icewright/icewright/internal/testenv"
)

// proxied is a store under test reached through a FaultProxy, and
// directly (to write and look without being counted or faulted).
type proxied struct {
	remoteStore
	proxy  *testenv.FaultProxy
	viaPxy map[string]string // IO properties through the proxy
}

func proxiedStores(t *testing.T) []proxied {
	g := testenv.GCS(t)
	gp := testenv.StartFaultProxy(t, g.Server())
	a := testenv.Azure(t)
	ap := testenv.StartFaultProxy(t, a.Server())
	return []proxied{
		{remoteStore{name: "gcs", props: g.Properties(), url: g.URL}, gp, g.Through(gp).Properties()},
		{remoteStore{name: "azure", props: a.Properties(), url: a.URL}, ap, a.Through(ap).Properties()},
	}
}

// direct is the store's iceberg-go IO, not through the proxy.
func (ps proxied) direct(t *testing.T) iceio.IO {
	t.Helper()
	fsys, err := iceio.LoadFS(context.Background(), ps.props, ps.url())
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// TestRemoteStoresRequests counts, at the server's door, what one Delete
// of 20 objects costs: on Azure one batch request and no single delete; on
// GCS (no batch API in the Go SDK) 20 single deletes.
func TestRemoteStoresRequests(t *testing.T) {
	for _, ps := range proxiedStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			ctx := context.Background()
			fsys := ps.direct(t)
			locs := make([]string, 20)
			for i := range locs {
				locs[i] = ps.url("n", fmt.Sprintf("f%02d.parquet", i))
			}
			write(t, fsys, locs...)
			st, err := Open(ctx, ps.viaPxy, ps.url())
			if err != nil {
				t.Fatal(err)
			}
			for i, err := range st.Delete(ctx, locs) {
				if err != nil {
					t.Errorf("%s: %v", locs[i], err)
				}
			}
			deletes, posts := len(ps.proxy.Requests("DELETE", "")), len(ps.proxy.Requests("POST", ""))
			want := map[string][2]int{"azure": {0, 1}, "gcs": {len(locs), 0}}[ps.name]
			if deletes != want[0] || posts != want[1] {
				t.Errorf("%d DELETE and %d POST requests, want %d and %d", deletes, posts, want[0], want[1])
			}
			if ps.name == "azure" && (posts != 1 || !strings.Contains(ps.proxy.Requests("POST", "")[0].Query, "comp=batch")) {
				t.Errorf("the POST is not a blob batch: %+v", ps.proxy.Requests("POST", ""))
			}
			for _, l := range locs {
				if exists(t, fsys, l) {
					t.Errorf("%s still exists", l)
				}
			}
		})
	}
}

// TestRemoteStoresFaults: a failed request never reads as a deletion. On
// Azure the batch request itself fails (503 every time, past the SDK's
// retries): every location of it is an error and every object is still
// there. On GCS one object's deletes fail: that one alone is an error and
// still there, the others are gone.
func TestRemoteStoresFaults(t *testing.T) {
	for _, ps := range proxiedStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			ctx := context.Background()
			fsys := ps.direct(t)
			locs := []string{ps.url("f", "a.parquet"), ps.url("f", "victim.parquet"), ps.url("f", "c.parquet")}
			write(t, fsys, locs...)
			wantErr := []bool{true, true, true}
			if ps.name == "gcs" {
				ps.proxy.Add(testenv.Fault{Method: "DELETE", Path: "victim", Status: 503, Code: "ServiceUnavailable"})
				wantErr = []bool{false, true, false}
			} else {
				ps.proxy.Add(testenv.Fault{Method: "POST", Query: "comp=batch", Status: 503, Code: "ServerBusy"})
			}
			st, err := Open(ctx, ps.viaPxy, ps.url())
			if err != nil {
				t.Fatal(err)
			}
			errs := st.Delete(ctx, locs)
			if ps.proxy.Faulted() == 0 {
				t.Fatal("no request met the fault")
			}
			for i, l := range locs {
				if (errs[i] != nil) != wantErr[i] {
					t.Errorf("%s: outcome %v, want an error: %v", l, errs[i], wantErr[i])
				}
				if still := exists(t, fsys, l); still != (errs[i] != nil) {
					t.Errorf("%s: outcome %v but the object exists: %v", l, errs[i], still)
				}
			}
		})
	}
}

// TestAzureBatchRefused: an account that refuses the batch request as such
// (400: one without Blob Batch) has its files deleted one by one through
// the table's IO, each with its outcome, and is not sent another batch.
func TestAzureBatchRefused(t *testing.T) {
	var ps proxied
	for _, p := range proxiedStores(t) {
		if p.name == "azure" {
			ps = p
		}
	}
	ctx := context.Background()
	fsys := ps.direct(t)
	first := []string{ps.url("r", "a.parquet"), ps.url("r", "b.parquet")}
	second := []string{ps.url("r", "c.parquet")}
	write(t, fsys, append(first, second...)...)
	ps.proxy.Add(testenv.Fault{Method: "POST", Query: "comp=batch", Status: 400, Code: "FeatureNotSupportedForAccount"})
	st, err := Open(ctx, ps.viaPxy, ps.url())
	if err != nil {
		t.Fatal(err)
	}
	for _, locs := range [][]string{first, second} {
		for i, err := range st.Delete(ctx, locs) {
			if err != nil {
				t.Errorf("%s: %v", locs[i], err)
			}
			if exists(t, fsys, locs[i]) {
				t.Errorf("%s still exists", locs[i])
			}
		}
	}
	if n := len(ps.proxy.Requests("POST", "")); n != 1 {
		t.Errorf("%d batch requests, want the one refused", n)
	}
	if n := len(ps.proxy.Requests("DELETE", "")); n != 3 {
		t.Errorf("%d single deletes, want 3", n)
	}
}
