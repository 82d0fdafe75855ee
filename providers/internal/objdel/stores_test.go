package objdel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/azure"
	_ "github.com/apache/iceberg-go/io/gocloud/gcs"

	"github.com/icewright/icewright/internal/testenv"
)

// remoteStore is one of the object stores under test: its IO properties
// and a location maker for the test's own prefix.
type remoteStore struct {
	name  string
	props map[string]string
	url   func(elem ...string) string
	// other is a location of the same scheme outside the Store's bucket.
	other string
}

func gcsStoreEnv(t *testing.T) remoteStore {
	e := testenv.GCS(t)
	return remoteStore{name: "gcs", props: e.Properties(), url: e.URL, other: "gs://not-" + e.Bucket + "/x"}
}

func azureStoreEnv(t *testing.T) remoteStore {
	e := testenv.Azure(t)
	return remoteStore{name: "azure", props: e.Properties(), url: e.URL,
		other: "abfs://not" + e.Container + "@" + e.Account + ".dfs.core.windows.net/x"}
}

// write puts one small object at each loc through iceberg-go's IO, the way
// a table's files get there.
func write(t *testing.T, fsys iceio.IO, locs ...string) {
	t.Helper()
	w, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		t.Fatalf("%T cannot write", fsys)
	}
	for _, l := range locs {
		if err := w.WriteFile(l, []byte("x")); err != nil {
			t.Fatalf("write %s: %v", l, err)
		}
	}
}

func exists(t *testing.T, fsys iceio.IO, loc string) bool {
	t.Helper()
	f, err := fsys.Open(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatalf("open %s: %v", loc, err)
	}
	f.Close()
	return true
}

func TestRemoteStores(t *testing.T) {
	for _, mk := range []func(*testing.T) remoteStore{gcsStoreEnv, azureStoreEnv} {
		rs := mk(t)
		t.Run(rs.name, func(t *testing.T) {
			ctx := context.Background()
			fsys, err := iceio.LoadFS(ctx, rs.props, rs.url())
			if err != nil {
				t.Fatalf("iceberg-go IO: %v", err)
			}
			st, err := Open(ctx, rs.props, rs.url("data"))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}

			t.Run("outcomes", func(t *testing.T) {
				del := []string{rs.url("o", "a.parquet"), rs.url("o", "dir", "b.parquet")}
				keep := rs.url("o", "keep.parquet")
				write(t, fsys, append(del, keep)...)
				absent := rs.url("o", "never-written.parquet")
				locs := []string{del[0], absent, rs.other, del[1]}
				errs := st.Delete(ctx, locs)
				if len(errs) != len(locs) {
					t.Fatalf("%d outcomes for %d locations", len(errs), len(locs))
				}
				for i, want := range []bool{false, false, true, false} {
					if (errs[i] != nil) != want {
						t.Errorf("%s: error %v, want error %v", locs[i], errs[i], want)
					}
				}
				for _, l := range del {
					if exists(t, fsys, l) {
						t.Errorf("%s still exists after a nil outcome", l)
					}
				}
				if !exists(t, fsys, keep) {
					t.Errorf("%s, not asked for, was deleted", keep)
				}
			})

			// Keys are the location's text after bucket/, as iceberg-go's IO
			// takes them: never unescaped. Deleting a%20b must not delete
			// "a b" (a live file, say), nor a?x the key "a".
			t.Run("literal keys", func(t *testing.T) {
				lit := []string{rs.url("lit", "a%20b.parquet"), rs.url("lit", "c?x=1.parquet"), rs.url("lit", "d#e.parquet")}
				twins := []string{rs.url("lit", "a b.parquet"), rs.url("lit", "c")}
				write(t, fsys, append(lit, twins...)...)
				for i, err := range st.Delete(ctx, lit) {
					if err != nil {
						t.Errorf("%s: %v", lit[i], err)
					}
				}
				for _, l := range lit {
					if exists(t, fsys, l) {
						t.Errorf("%s still exists", l)
					}
				}
				for _, l := range twins {
					if !exists(t, fsys, l) {
						t.Errorf("%s, another object than the ones deleted, is gone", l)
					}
				}
			})

			t.Run("over the limit", func(t *testing.T) {
				n := st.MaxBatch() + 3
				locs := make([]string, n)
				for i := range locs {
					locs[i] = rs.url("big", fmt.Sprintf("f%04d", i))
				}
				write(t, fsys, locs...)
				// One call over the limit is refused whole and deletes nothing.
				for i, err := range st.Delete(ctx, locs) {
					if err == nil {
						t.Fatalf("%s: nil outcome in a batch over the limit", locs[i])
					}
				}
				if !exists(t, fsys, locs[0]) || !exists(t, fsys, locs[n-1]) {
					t.Fatal("a refused batch deleted objects")
				}
				// Split by the caller, every object goes.
				for lo := 0; lo < n; lo += st.MaxBatch() {
					for i, err := range st.Delete(ctx, locs[lo:min(lo+st.MaxBatch(), n)]) {
						if err != nil {
							t.Errorf("%s: %v", locs[lo+i], err)
						}
					}
				}
				for _, l := range locs {
					if exists(t, fsys, l) {
						t.Errorf("%s still exists", l)
					}
				}
			})
		})
	}
}

// TestAzureBatchPerItemError: a leased blob cannot be deleted without its
// lease id; its sub-request fails while the others of the same batch
// succeed, and the outcome names it alone.
func TestAzureBatchPerItemError(t *testing.T) {
	e := testenv.Azure(t)
	ctx := context.Background()
	fsys, err := iceio.LoadFS(ctx, e.Properties(), e.URL())
	if err != nil {
		t.Fatal(err)
	}
	locs := []string{e.URL("a"), e.URL("leased"), e.URL("c")}
	write(t, fsys, locs...)
	bc := e.ContainerClient(t).NewBlobClient(e.Prefix + "/leased")
	lc, err := lease.NewBlobClient(bc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.AcquireLease(ctx, -1, nil); err != nil {
		t.Fatalf("lease: %v", err)
	}
	t.Cleanup(func() { _, _ = lc.BreakLease(context.Background(), nil) })
	st, err := Open(ctx, e.Properties(), e.URL())
	if err != nil {
		t.Fatal(err)
	}
	errs := st.Delete(ctx, locs)
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("unleased blobs: %v, %v", errs[0], errs[2])
	}
	if !bloberror.HasCode(errs[1], bloberror.LeaseIDMissing) {
		t.Errorf("leased blob: %v, want LeaseIdMissing", errs[1])
	}
	if !exists(t, fsys, locs[1]) || exists(t, fsys, locs[0]) || exists(t, fsys, locs[2]) {
		t.Error("the batch deleted other than the unleased blobs")
	}
}

// TestGCSWithoutCredentials: with no credential property and no
// Application Default Credentials, Open steps aside with ErrNoBatchAPI
// (the caller then deletes through the table's IO, which may hold vended
// credentials) instead of failing the deletion.
func TestGCSWithoutCredentials(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "none.json"))
	_, err := Open(context.Background(), map[string]string{"gcs.service.host": "http://127.0.0.1:1/storage/v1/"}, "gs://b/k")
	if !errors.Is(err, ErrNoBatchAPI) {
		t.Errorf("Open = %v, want ErrNoBatchAPI", err)
	}
}

// TestOpenWithoutStoreProperties: a caller that passes no gcs.* or adls.*
// properties gets ErrNoBatchAPI, not a Store that would reach the public
// endpoint with default credentials while the table's IO reaches another
// one (seen: an Azure Store opened with nil properties sent its batches to
// devstoreaccount1.blob.core.windows.net).
func TestOpenWithoutStoreProperties(t *testing.T) {
	for _, loc := range []string{"gs://b/k", "abfs://c@acct.dfs.core.windows.net/k"} {
		for _, props := range []map[string]string{nil, {"s3.region": "x"}} {
			if _, err := Open(context.Background(), props, loc); !errors.Is(err, ErrNoBatchAPI) {
				t.Errorf("Open(%v, %s) = %v, want ErrNoBatchAPI", props, loc, err)
			}
		}
	}
}

// TestEscapedKeysAfterFirstCallerEnds: the table's IO that deletes the keys
// gocloud escapes is opened by the first Delete that needs it, and still
// works for a later Delete once that first caller's context is over.
func TestEscapedKeysAfterFirstCallerEnds(t *testing.T) {
	for _, mk := range []func(*testing.T) remoteStore{gcsStoreEnv, azureStoreEnv} {
		rs := mk(t)
		t.Run(rs.name, func(t *testing.T) {
			fsys, err := iceio.LoadFS(context.Background(), rs.props, rs.url())
			if err != nil {
				t.Fatal(err)
			}
			// Keys gocloud escapes: a newline on GCS, "?" on Azure.
			esc := map[string]string{"gcs": "\n", "azure": "?"}[rs.name]
			first, second := rs.url("e", "a"+esc+"1.parquet"), rs.url("e", "b"+esc+"2.parquet")
			write(t, fsys, first, second)
			st, err := Open(context.Background(), rs.props, rs.url())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if err := st.Delete(ctx, []string{first})[0]; err != nil {
				t.Fatalf("%s: %v", first, err)
			}
			cancel()
			if err := st.Delete(context.Background(), []string{second})[0]; err != nil {
				t.Errorf("%s after the first caller ended: %v", second, err)
			}
			for _, l := range []string{first, second} {
				if exists(t, fsys, l) {
					t.Errorf("%s still exists", l)
				}
			}
		})
	}
}
