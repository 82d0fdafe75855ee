package testkit

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// The commit check's test seams write what a producer with a bug would
// have written: a snapshot's manifest list again, in place, with other
// manifests, and manifests of hand-made entries.

// RewriteManifestList writes snap's manifest list again, in place, with
// the manifests edit returns.
func RewriteManifestList(t testing.TB, fs iceio.IO, meta table.Metadata, snap table.Snapshot, edit func([]iceberg.ManifestFile) []iceberg.ManifestFile) error {
	t.Helper()
	ms, err := snap.Manifests(fs)
	if err != nil {
		return err
	}
	ms = edit(ms)
	w, err := fs.(iceio.WriteFileIO).Create(snap.ManifestList)
	if err != nil {
		return err
	}
	seq := snap.SequenceNumber
	if err := iceberg.WriteManifestList(meta.Version(), w, snap.SnapshotID, snap.ParentSnapshotID, &seq, 0, ms); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// WriteManifest writes a manifest of entries for snap beside its manifest
// list, named with suffix.
func WriteManifest(t testing.TB, fs iceio.IO, meta table.Metadata, snap table.Snapshot, suffix string, entries ...iceberg.ManifestEntry) (iceberg.ManifestFile, error) {
	t.Helper()
	path := strings.TrimSuffix(snap.ManifestList, ".avro") + "-" + suffix + ".avro"
	w, err := fs.(iceio.WriteFileIO).Create(path)
	if err != nil {
		return nil, err
	}
	mf, err := iceberg.WriteManifest(path, w, meta.Version(), meta.PartitionSpec(), meta.CurrentSchema(), snap.SnapshotID, entries)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return mf, err
}

// Added is an ADDED entry of snap for df.
func Added(snap table.Snapshot, df iceberg.DataFile) iceberg.ManifestEntry {
	id := snap.SnapshotID
	return iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &id, nil, nil, df)
}

// DataFileLike is df with another path and record count.
func DataFileLike(t testing.TB, meta table.Metadata, df iceberg.DataFile, path string, records int64) iceberg.DataFile {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(meta.PartitionSpec(), iceberg.EntryContentData, path, iceberg.ParquetFile,
		df.Partition(), nil, nil, records, df.FileSizeBytes())
	if err != nil {
		t.Fatal(err)
	}
	return b.Build()
}
