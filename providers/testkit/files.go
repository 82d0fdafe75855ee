package testkit

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// CurrentManifests opens tbl's IO and lists its current snapshot's
// manifests.
func CurrentManifests(t testing.TB, tbl *table.Table) (iceio.IO, []iceberg.ManifestFile) {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return fsys, ms
}
