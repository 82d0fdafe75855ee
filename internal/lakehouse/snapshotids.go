package lakehouse

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// RespellSnapshotIDs gives snapshots of a local table other ids: ids maps
// an old id to its new one. A snapshot id is any long, negative ones
// included, and a writer that thinks of ids as unsigned 64-bit values
// writes negative ones (the duckdb-iceberg corpus table
// equality_delete_cross_partition has one), while iceberg-go and Java only
// ever generate positive ids. Tests build such tables with iceberg-go and
// then respell them.
//
// Every place the table records an id is rewritten, so that every reader
// sees one consistent table: in the metadata JSON each "snapshot-id",
// "parent-snapshot-id" and "current-snapshot-id" (snapshots, refs, the
// snapshot log, statistics); in manifest lists each added_snapshot_id and
// the snapshot-id and parent-snapshot-id of the file's key/value metadata;
// in manifests each entry's snapshot_id. Manifest lists and manifests are
// rewritten in place (their names, which may spell the old id, stay), and
// each list's manifest_length follows its manifest's new size. The new
// metadata is committed as the next version with a compare-and-swap, as
// Backdate does. It returns the new metadata location.
//
// Only tables on local storage (bare paths or file:// URIs) are supported.
func RespellSnapshotIDs(ctx context.Context, db *sql.DB, catalogName string, tbl *table.Table, ids map[int64]int64) (string, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", fmt.Errorf("respell snapshot ids of %v: %w", tbl.Identifier(), err)
	}
	local := func(p string) string { return strings.TrimPrefix(p, "file://") }
	// Manifests first: their new sizes go into the lists.
	newLength := map[string]int64{}
	for _, s := range tbl.Metadata().Snapshots() {
		mans, err := s.Manifests(fsys)
		if err != nil {
			return "", fmt.Errorf("respell snapshot ids of %v: snapshot %d: %w", tbl.Identifier(), s.SnapshotID, err)
		}
		for _, m := range mans {
			if _, done := newLength[m.FilePath()]; done {
				continue
			}
			n, err := respellAvro(local(m.FilePath()), ids, func(rec map[string]any) {
				respellLong(rec, "snapshot_id", ids)
			})
			if err != nil {
				return "", fmt.Errorf("respell snapshot ids of %v: manifest %s: %w", tbl.Identifier(), m.FilePath(), err)
			}
			newLength[m.FilePath()] = n
		}
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.ManifestList == "" {
			continue
		}
		_, err := respellAvro(local(s.ManifestList), ids, func(rec map[string]any) {
			respellLong(rec, "added_snapshot_id", ids)
			if p, ok := rec["manifest_path"].(string); ok {
				if n, ok := newLength[p]; ok {
					rec["manifest_length"] = n
				}
			}
		}, "snapshot-id", "parent-snapshot-id")
		if err != nil {
			return "", fmt.Errorf("respell snapshot ids of %v: manifest list %s: %w", tbl.Identifier(), s.ManifestList, err)
		}
	}
	return commitMetadataEdit(ctx, db, catalogName, tbl, "respell snapshot ids", func(raw []byte, oldLoc string) ([]byte, error) {
		return respellMetadata(raw, oldLoc, ids)
	})
}

// respellAvro rewrites the Avro file at p in place, passing each record to
// edit, and returns its new size. metaKeys name key/value metadata entries
// that hold a snapshot id in decimal (a manifest list's snapshot-id and
// parent-snapshot-id).
func respellAvro(p string, ids map[int64]int64, edit func(map[string]any), metaKeys ...string) (int64, error) {
	records, meta, schema, err := readOCF(p)
	if err != nil {
		return 0, err
	}
	for _, rec := range records {
		edit(rec)
	}
	for _, k := range metaKeys {
		if id, err := strconv.ParseInt(string(meta[k]), 10, 64); err == nil {
			if to, ok := ids[id]; ok {
				meta[k] = []byte(strconv.FormatInt(to, 10))
			}
		}
	}
	raw, err := writeOCF(schema, meta, records)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		return 0, err
	}
	return int64(len(raw)), nil
}

// respellLong replaces rec[key] when it is a long that ids maps.
func respellLong(rec map[string]any, key string, ids map[int64]int64) {
	if id, ok := rec[key].(int64); ok {
		if to, ok := ids[id]; ok {
			rec[key] = to
		}
	}
}

// snapshotIDKeys are the metadata JSON keys whose value is a snapshot id.
var snapshotIDKeys = map[string]bool{"snapshot-id": true, "parent-snapshot-id": true, "current-snapshot-id": true}

// respellMetadata decodes with UseNumber so that 64-bit ids survive the
// round trip exactly, and records oldLoc in the metadata log.
func respellMetadata(raw []byte, oldLoc string, ids map[int64]int64) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				if n, ok := e.(json.Number); ok && snapshotIDKeys[k] {
					if id, err := n.Int64(); err == nil {
						if to, ok := ids[id]; ok {
							x[k] = json.Number(strconv.FormatInt(to, 10))
						}
					}
					continue
				}
				walk(e)
			}
		}
	}
	walk(m)
	lu, _ := m["last-updated-ms"].(json.Number)
	appendMetadataLog(m, oldLoc, lu)
	return json.MarshalIndent(m, "", "  ")
}
