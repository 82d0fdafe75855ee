package expiry

import (
	"context"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// What the external tests (package expiry_test, which uses providers to set
// tables up) need of the package's inside.

// HistoryState is historyState.
var HistoryState = historyState

// ReleasedFiles is releasedFiles, as the files' paths.
func ReleasedFiles(ctx context.Context, fs iceio.IO, base table.Metadata, goneIDs []int64, kept *table.Table, limit int) ([]string, error) {
	refs, err := releasedFiles(ctx, fs, base, goneIDs, kept, limit)
	var paths []string
	for _, r := range refs {
		paths = append(paths, r.path)
	}
	return paths, err
}
