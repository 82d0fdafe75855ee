package lakehouse

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Backdate is the time machine of the demo and the test kit. iceberg-go
// stamps every snapshot and metadata-log entry with time.Now and has no
// update that rewrites the timestamps of existing snapshots, so a table built
// in a few seconds has no "old" history to expire. Backdate writes a new
// metadata version whose timestamps (last-updated-ms, every snapshot, the
// snapshot log and the metadata log) are all shifted back by d, records the
// previous metadata file in the metadata log as a real commit would, and
// commits it to the SQL catalog with a compare-and-swap on the metadata
// location (the same guard the SQL catalog's CommitTable uses). Nothing else
// changes: ids, manifests and data files stay as they are. Calling it after
// successive batches of commits spreads history over time.
//
// It returns the new metadata location. Only SQL catalogs are supported.
func Backdate(ctx context.Context, db *sql.DB, catalogName string, tbl *table.Table, d time.Duration) (string, error) {
	ident := tbl.Identifier()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", fmt.Errorf("backdate %v: %w", ident, err)
	}
	oldLoc := tbl.MetadataLocation()
	raw, err := readAll(fsys, oldLoc)
	if err != nil {
		return "", fmt.Errorf("backdate %v: read metadata: %w", ident, err)
	}
	doc, err := shiftMetadata(raw, oldLoc, d.Milliseconds())
	if err != nil {
		return "", fmt.Errorf("backdate %v: %w", ident, err)
	}
	newLoc := nextMetadataLocation(tbl.Location(), oldLoc)
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("backdate %v: file IO %T cannot write", ident, fsys)
	}
	if err := wfs.WriteFile(newLoc, doc); err != nil {
		return "", fmt.Errorf("backdate %v: write metadata: %w", ident, err)
	}
	if err := SwapMetadata(ctx, db, catalogName, ident, oldLoc, newLoc); err != nil {
		_ = fsys.Remove(newLoc)
		return "", fmt.Errorf("backdate: %w", err)
	}
	return newLoc, nil
}

func readAll(fsys iceio.IO, loc string) ([]byte, error) {
	if r, ok := fsys.(iceio.ReadFileIO); ok {
		return r.ReadFile(loc)
	}
	f, err := fsys.Open(loc)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}

// shiftMetadata decodes with UseNumber so that 64-bit snapshot ids survive
// the round trip exactly.
func shiftMetadata(raw []byte, oldLoc string, ms int64) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode metadata: %w", err)
	}
	shift := func(v any) (any, int64, error) {
		n, ok := v.(json.Number)
		if !ok {
			return v, 0, fmt.Errorf("timestamp %v is not a number", v)
		}
		i, err := n.Int64()
		if err != nil {
			return v, 0, err
		}
		return json.Number(strconv.FormatInt(i-ms, 10)), i - ms, nil
	}
	shiftEach := func(key, field string) error {
		list, _ := m[key].([]any)
		for _, e := range list {
			obj, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if v, ok := obj[field]; ok {
				nv, _, err := shift(v)
				if err != nil {
					return fmt.Errorf("%s: %w", key, err)
				}
				obj[field] = nv
			}
		}
		return nil
	}
	if err := shiftEach("snapshots", "timestamp-ms"); err != nil {
		return nil, err
	}
	if err := shiftEach("snapshot-log", "timestamp-ms"); err != nil {
		return nil, err
	}
	if err := shiftEach("metadata-log", "timestamp-ms"); err != nil {
		return nil, err
	}
	lu, shifted, err := shift(m["last-updated-ms"])
	if err != nil {
		return nil, fmt.Errorf("last-updated-ms: %w", err)
	}
	m["last-updated-ms"] = lu
	// The previous file joins the metadata log, stamped with its own
	// (shifted) last-updated time, exactly as a catalog commit records it.
	log, _ := m["metadata-log"].([]any)
	log = append(log, map[string]any{
		"metadata-file": oldLoc,
		"timestamp-ms":  json.Number(strconv.FormatInt(shifted, 10)),
	})
	m["metadata-log"] = log
	return json.MarshalIndent(m, "", "  ")
}

// nextMetadataLocation follows the NNNNN-<uuid>.metadata.json naming that
// iceberg-go and Java use, so that tools which sort metadata files by version
// see the backdated version as the newest.
func nextMetadataLocation(tableLoc, oldLoc string) string {
	base := path.Base(oldLoc)
	version := 0
	if i := strings.IndexByte(base, '-'); i > 0 {
		if v, err := strconv.Atoi(base[:i]); err == nil {
			version = v
		}
	} else if strings.HasPrefix(base, "v") {
		if v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(base, "v"), ".metadata.json")); err == nil {
			version = v
		}
	}
	dir := strings.TrimSuffix(oldLoc, "/"+base)
	if dir == oldLoc {
		dir = strings.TrimSuffix(tableLoc, "/") + "/metadata"
	}
	return fmt.Sprintf("%s/%05d-%s.metadata.json", dir, version+1, uuid.NewString())
}
