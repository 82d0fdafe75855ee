package providers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/testenv"
)

// TestLeaseS3OutlivesInterrupt: apply takes a table's lease with its run's
// context, which the first Ctrl-C cancels, and then keeps renewing it while
// the running action finishes and releases it at the end with a detached
// context (apply/lock.go). iceberg-go's blob FS sends every request with the
// context it was opened with, so a lease store opened with the run's
// context could neither renew nor release once interrupted: the lease
// lapsed under a running action and was left behind for the next run.
func TestLeaseS3OutlivesInterrupt(t *testing.T) {
	env := testenv.S3(t)
	prefix := fmt.Sprintf("lease-interrupt-%d", time.Now().UnixNano())
	loc := env.URL(prefix)
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &Table{address: "s3.db.leases", t: table.New(table.Identifier{"db", "leases"}, meta, loc+"/metadata/v1.metadata.json",
		func(ctx context.Context) (iceio.IO, error) { return iceio.LoadFS(ctx, env.Properties(), loc) }, nil)}

	runCtx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	now := time.Now().UTC().Truncate(time.Second)
	lease := Lease{Owner: "a@host", RunID: "run-a", Since: now, ExpiresAt: now.Add(time.Minute)}
	held, err := (&Session{}).TakeLease(runCtx, h, lease, now)
	if err != nil {
		t.Fatal(err)
	}
	interrupt() // the first Ctrl-C: the running action goes on
	detached := context.WithoutCancel(runCtx)
	if err := held.Renew(detached, now.Add(2*time.Minute)); err != nil {
		t.Fatalf("renew after the interrupt: %v", err)
	}
	if err := held.Release(detached); err != nil {
		t.Fatalf("release after the interrupt: %v", err)
	}
	if cur, ok, err := (&Session{}).TableLease(context.Background(), h); ok || err != nil {
		t.Fatalf("lease left after release: %+v %v %v", cur, ok, err)
	}
}
