package reach

import (
	"context"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
)

// ReadManifests is readManifests of whole manifests, live entries only, for
// the external tests (package reach_test, which builds tables with
// providers/testkit, itself an importer of reach).
func ReadManifests(ctx context.Context, fsys iceio.IO, ms []iceberg.ManifestFile, consume func(ord int, e iceberg.ManifestEntry) error) error {
	todo := make([]manifestRead, len(ms))
	for i, m := range ms {
		todo[i] = manifestRead{ord: i, m: m, discardDeleted: true}
	}
	return readManifests(ctx, fsys, todo, consume)
}
