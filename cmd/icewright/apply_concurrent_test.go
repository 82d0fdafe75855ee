package main

// A writer in another process (this test, relative to the icewright binary)
// appends to a demo table in a loop while `icewright apply` runs. Every row the
// writer committed must be present afterwards, with every referenced file in
// place: apply never overwrites a concurrent writer's commit.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/testkit"
)

const concurrentTable = "analytics.events"

// writerAppend appends n rows with event_id from start; the error is
// returned (it runs in a goroutine).
func writerAppend(ctx context.Context, tbl *table.Table, start int64, n int) error {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range int64(n) {
		id := start + i
		for f := range sc.NumFields() {
			switch fb := b.Field(f).(type) {
			case *array.Int64Builder:
				fb.Append(id)
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(testkit.Day0.Add(time.Duration(id) * time.Second).UnixMicro()))
			case *array.StringBuilder:
				fb.Append("writer")
			default:
				return fmt.Errorf("unexpected column builder %T", fb)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer at.Release()
	_, err = tbl.AppendTable(ctx, at, 1024, nil)
	return err
}

func TestApplyWithConcurrentWriter(t *testing.T) {
	bin := buildIcewright(t)
	dir := t.TempDir()
	lake := demoLake(t, bin, dir)
	before := testkit.ScanIDs(t, lake.Reload(t, concurrentTable))
	if len(before) == 0 {
		t.Fatal("demo table is empty")
	}

	cmd := exec.Command(bin, "-chdir="+dir, "apply", "-auto-approve")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	applyDone := make(chan error, 1)
	go func() { applyDone <- cmd.Wait() }()

	var (
		wg        sync.WaitGroup
		committed []int64
		failed    int
		lastErr   error
		stop      = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := int64(50_000_000)
		for {
			select {
			case <-stop:
				return
			default:
			}
			tbl, err := lake.Catalog.LoadTable(context.Background(), testkit.Ident(concurrentTable))
			if err == nil {
				err = writerAppend(context.Background(), tbl, next, 3)
			}
			if err == nil {
				for i := range int64(3) {
					committed = append(committed, next+i)
				}
			} else {
				failed++
				lastErr = err
			}
			next += 3
			// Bursts of back-to-back commits, then a pause: the bursts hit
			// apply's commits head-on, the pauses let destructive actions
			// (expiry, orphan removal) run while the writer is still live.
			if (next/3)%8 == 0 {
				time.Sleep(400 * time.Millisecond)
			} else {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	applyErr := <-applyDone
	close(stop)
	wg.Wait()
	t.Logf("apply: %v; writer committed %d rows, %d appends failed (last: %v)\n%s", applyErr, len(committed), failed, lastErr, out.String())
	if len(committed) == 0 {
		t.Fatal("the writer committed nothing during apply: the test proves nothing")
	}
	if ee, ok := applyErr.(*exec.ExitError); applyErr != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("apply crashed: %v", applyErr)
	}

	tbl := lake.Reload(t, concurrentTable)
	if err := referencedFilesExist(tbl); err != nil {
		t.Fatal(err)
	}
	ids := testkit.ScanIDs(t, tbl)
	for id, n := range before {
		if ids[id] != n {
			t.Fatalf("row %d: %d copies after apply, %d before", id, ids[id], n)
		}
	}
	for _, id := range committed {
		if ids[id] != 1 {
			t.Fatalf("row %d the writer committed has %d copies after apply", id, ids[id])
		}
	}
	if len(ids) != len(before)+len(committed) {
		t.Fatalf("%d distinct rows, want %d", len(ids), len(before)+len(committed))
	}
	for _, name := range lakeTables(t, lake) {
		tableHealth(t, lake, name)
	}
}
