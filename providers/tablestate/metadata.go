package tablestate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
)

// Metadata is the part of the state that the table metadata alone
// gives: everything but the current snapshot's file aggregate and orphans.
func Metadata(tbl *table.Table, address string, specs *compaction.SpecCheck) *diff.TableState {
	md := tbl.Metadata()
	st := &diff.TableState{
		Address:            address,
		UUID:               md.TableUUID().String(),
		MetadataLocation:   tbl.MetadataLocation(),
		Location:           md.Location(),
		FormatVersion:      md.Version(),
		LastUpdatedMs:      md.LastUpdatedMillis(),
		Properties:         maps.Clone(map[string]string(md.Properties())),
		DefaultSortOrderID: md.DefaultSortOrder(),
		DefaultSpecID:      md.DefaultPartitionSpec(),
		Partitions:         []diff.PartitionStats{},
	}
	if st.Properties == nil {
		st.Properties = map[string]string{}
	}
	st.MetadataBytes = jsonSize(md)
	if cur := md.CurrentSnapshot(); cur != nil {
		st.SnapshotBytes = jsonSize(cur)
	}
	sc := md.CurrentSchema()
	// Non-nil even without columns: the plan checks sort columns against
	// an observed schema (diff.TableState.Schema).
	st.Schema = []diff.Column{}
	for _, f := range sc.Fields() {
		st.Schema = append(st.Schema, diff.Column{ID: f.ID, Name: f.Name, Type: f.Type.String(),
			SortTransforms: compaction.SortTransforms(f.Type)})
	}
	st.SortOrder = SortFields(md.SortOrder(), sc)
	for _, spec := range md.PartitionSpecs() {
		ps := diff.PartitionSpec{ID: spec.ID(), Fields: []string{}}
		for _, f := range spec.Fields() {
			col, _ := sc.FindColumnName(f.SourceID())
			ps.Fields = append(ps.Fields, fmt.Sprintf("%s(%s)", f.Transform, col))
		}
		st.Specs = append(st.Specs, ps)
	}
	st.UnwritableSpecs = specs.Unwritable(tbl)
	for _, snap := range md.Snapshots() {
		ds := diff.Snapshot{
			ID:             snap.SnapshotID,
			ParentID:       snap.ParentSnapshotID,
			SequenceNumber: snap.SequenceNumber,
			TimestampMs:    snap.TimestampMs,
			ManifestList:   snap.ManifestList,
		}
		if snap.Summary != nil {
			ds.Operation = string(snap.Summary.Operation)
			ds.Summary = maps.Clone(map[string]string(snap.Summary.Properties))
		}
		st.Snapshots = append(st.Snapshots, ds)
	}
	for name, ref := range md.Refs() {
		st.Refs = append(st.Refs, diff.Ref{
			Name:               name,
			Type:               string(ref.SnapshotRefType),
			SnapshotID:         ref.SnapshotID,
			MinSnapshotsToKeep: ref.MinSnapshotsToKeep,
			MaxSnapshotAgeMs:   ref.MaxSnapshotAgeMs,
			MaxRefAgeMs:        ref.MaxRefAgeMs,
		})
	}
	slices.SortFunc(st.Refs, func(a, b diff.Ref) int { return cmp.Compare(a.Name, b.Name) })
	for e := range md.PreviousFiles() {
		st.MetadataLog = append(st.MetadataLog, diff.MetadataLogEntry{File: e.MetadataFile, TimestampMs: e.TimestampMs})
	}
	if cur := md.CurrentSnapshot(); cur != nil {
		id := cur.SnapshotID
		st.CurrentSnapshotID = &id
	}
	return st
}

// SortFields renders the default sort order in diff's (= config's)
// vocabulary: "identity", "bucket[16]", "day", ...
func SortFields(so table.SortOrder, sc *iceberg.Schema) []diff.SortField {
	out := []diff.SortField{}
	for _, f := range so.Fields() {
		col := ""
		if len(f.SourceIDs) > 0 {
			col, _ = sc.FindColumnName(f.SourceIDs[0])
		}
		out = append(out, diff.SortField{
			Transform:  f.Transform.String(),
			Column:     col,
			Descending: f.Direction == table.SortDESC,
			NullsFirst: f.NullOrder == table.NullsFirst,
		})
	}
	return out
}

// jsonSize is the length of v as JSON (iceberg-go writes a table's
// metadata file as its json.Marshal), 0 when it cannot be serialized.
func jsonSize(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return int64(len(b))
}
