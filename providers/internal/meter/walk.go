package meter

import (
	"context"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"gocloud.dev/blob"
)

// BindWalk makes the walks of fsys, an object store IO iceberg-go opened
// with ctx, send their requests with ctx like the rest of it. iceberg-go's
// WalkDir goes through the bucket's io/fs view, whose calls gocloud makes
// with context.Background() unless told otherwise: without this, a
// quarantine's listing would escape the action's meter (and the table's
// storage breaker). Call it on a freshly opened IO, before any walk; it
// does nothing for other IOs.
func BindWalk(ctx context.Context, fsys iceio.IO) {
	if b, ok := fsys.(*blobfs.FileIO); ok && b.Bucket != nil {
		b.Bucket.SetIOFSCallback(func() (context.Context, *blob.ReaderOptions) { return ctx, nil })
	}
}
