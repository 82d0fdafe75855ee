package expiry

import (
	"context"
	"fmt"
	"testing"
	"time"

	iceio "github.com/apache/iceberg-go/io"

	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/internal/store"
)

// stallingFS is an object store whose deletes stop being answered after
// the first ok: each later one stalls the breaker's limit of attempts, as
// the S3 client does against a paused server, and fails unanswered.
type stallingFS struct {
	iceio.IO
	ctx     context.Context
	ok      int
	removes []string
}

func (f *stallingFS) Remove(name string) error {
	f.removes = append(f.removes, name)
	if len(f.removes) <= f.ok {
		return nil
	}
	b := bound.BreakerOf(f.ctx)
	for range bound.DefaultStallLimit {
		b.Stalled(time.Second)
	}
	return fmt.Errorf("remove %s: %w", name, b.Err())
}

// TestDeleteFilesStopsWhenStoreUnresponsive: once the table's store is
// judged unresponsive, expiry's deletions start no new delete; the file
// whose delete got no answer is in a place unknown, the rest are counted
// as left (unreferenced, for the next sweep), and the stop says why.
func TestDeleteFilesStopsWhenStoreUnresponsive(t *testing.T) {
	ctx := bound.WithBreaker(context.Background())
	fs := &stallingFS{ctx: ctx, ok: 2}
	var files []fileRef
	for i := range 10 {
		files = append(files, fileRef{path: fmt.Sprintf("s3://b/t/data/%d.parquet", i), size: 1})
	}
	var res store.Result
	_, stopped := deleteFiles(ctx, fs, files, objdel.Settings{Concurrency: 1}, nil, nil, &res)
	if len(fs.removes) != 3 {
		t.Errorf("%d deletes sent, want 3 (two answered, one without an answer, none after)", len(fs.removes))
	}
	if res.FilesDeleted != 2 || res.FilesPlaceUnknown != 1 || res.FilesLeft != 7 || len(res.DeleteErrors) != 1 {
		t.Errorf("deleted %d, unknown %d, left %d, errors %v", res.FilesDeleted, res.FilesPlaceUnknown, res.FilesLeft, res.DeleteErrors)
	}
	if stopped == nil || !bound.Unanswered(stopped) {
		t.Errorf("stopped = %v, want the breaker's error", stopped)
	}
}
