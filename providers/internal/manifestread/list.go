package manifestread

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro"
)

// listEntry is a v2 manifest list entry: iceberg-go v0.7.0's manifestFile
// (manifest.go), its tags restated, so that the reader schema built from it
// resolves a writer's schema as iceberg-go's does (legacy names by alias,
// first_row_id absent from a v2 writer by its null default).
type listEntry struct {
	Path               string                  `avro:"manifest_path"`
	Len                int64                   `avro:"manifest_length"`
	SpecID             int32                   `avro:"partition_spec_id"`
	Content            int32                   `avro:"content"`
	SeqNumber          int64                   `avro:"sequence_number"`
	MinSeqNumber       int64                   `avro:"min_sequence_number"`
	AddedSnapshotID    int64                   `avro:"added_snapshot_id"`
	AddedFilesCount    int32                   `avro:"added_files_count,alias=added_data_files_count"`
	ExistingFilesCount int32                   `avro:"existing_files_count,alias=existing_data_files_count"`
	DeletedFilesCount  int32                   `avro:"deleted_files_count,alias=deleted_data_files_count"`
	AddedRowsCount     int64                   `avro:"added_rows_count"`
	ExistingRowsCount  int64                   `avro:"existing_rows_count"`
	DeletedRowsCount   int64                   `avro:"deleted_rows_count"`
	PartitionList      *[]iceberg.FieldSummary `avro:"partitions,type-alias=r508"`
	Key                *[]byte                 `avro:"key_metadata"`
	FirstRowID         *int64                  `avro:"first_row_id"`
}

// listEntryV1 is a v1 manifest list entry (iceberg-go's manifestFileV1):
// the counts and the snapshot id may be null.
type listEntryV1 struct {
	Path               string                  `avro:"manifest_path"`
	Len                int64                   `avro:"manifest_length"`
	SpecID             int32                   `avro:"partition_spec_id"`
	AddedSnapshotID    *int64                  `avro:"added_snapshot_id"`
	AddedFilesCount    *int32                  `avro:"added_files_count,alias=added_data_files_count"`
	ExistingFilesCount *int32                  `avro:"existing_files_count,alias=existing_data_files_count"`
	DeletedFilesCount  *int32                  `avro:"deleted_files_count,alias=deleted_data_files_count"`
	AddedRowsCount     *int64                  `avro:"added_rows_count"`
	ExistingRowsCount  *int64                  `avro:"existing_rows_count"`
	DeletedRowsCount   *int64                  `avro:"deleted_rows_count"`
	PartitionList      *[]iceberg.FieldSummary `avro:"partitions,type-alias=r508"`
	Key                *[]byte                 `avro:"key_metadata"`
}

var (
	listReaderV2 = avro.MustSchemaFor[listEntry](avro.WithName("manifest_file"))
	listReaderV1 = avro.MustSchemaFor[listEntryV1](avro.WithName("manifest_file"))
)

// ErrV3List: a v3 manifest list, whose first_row_id iceberg-go's exported
// constructors cannot set; iceberg-go's reader reads it.
var ErrV3List = errors.New("a v3 manifest list: read it with iceberg-go")

// listPlan is what one distinct manifest list schema decodes with.
type listPlan struct {
	schema   *avro.Schema // resolved against the v1 or v2 reader
	inferred int          // the format version its fields show
	v1       bool         // resolved against the v1 reader
}

// listPlans caches a listPlan by schema bytes and metadata format-version.
var listPlans cache[listPlan]

// ReadList decodes a manifest list from r into iceberg-go's ManifestFile
// values (its exported builder), as iceberg-go's ReadManifestList does:
// the format version from the metadata or, without it, inferred from the
// schema's fields; v1 entries' missing counts -1 and sequence numbers 0.
// A v3 list is ErrV3List. Any error means: read it with iceberg-go.
func ReadList(r io.Reader) ([]iceberg.ManifestFile, error) {
	br := getReader(r)
	defer putReader(br)
	h, err := readHeader(br)
	if err != nil {
		return nil, err
	}
	schema, ok := h.meta["avro.schema"]
	if !ok {
		return nil, errors.New("the Avro header has no avro.schema")
	}
	version := 0
	if raw := h.meta["format-version"]; len(raw) > 0 {
		if version, err = strconv.Atoi(string(raw)); err != nil {
			return nil, fmt.Errorf("invalid format-version: %w", err)
		}
	}
	p, err := listPlanFor(schema, version)
	if err != nil {
		return nil, err
	}
	if version == 0 {
		version = p.inferred
	}
	if version < 1 || version > 3 || version < p.inferred {
		return nil, fmt.Errorf("manifest list format version %d (its schema shows v%d)", version, p.inferred)
	}
	if version == 3 {
		return nil, ErrV3List
	}
	dec, release, err := codec(h.meta)
	if err != nil {
		return nil, err
	}
	defer release()
	bl := blocks{r: br, sync: h.sync, codec: dec}
	out := []iceberg.ManifestFile{}
	for {
		count, block, err := bl.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for range count {
			var m iceberg.ManifestFile
			var rest []byte
			if p.v1 {
				var e listEntryV1
				rest, err = p.schema.Decode(block, &e)
				m = e.build()
			} else {
				var e listEntry
				rest, err = p.schema.Decode(block, &e)
				m = e.build(version)
			}
			if err != nil {
				return nil, fmt.Errorf("decode a manifest list entry: %w", noEOF(err))
			}
			if len(rest) == len(block) {
				return nil, errors.New("a manifest list entry of zero bytes")
			}
			block = rest
			out = append(out, m)
		}
		if len(block) != 0 {
			return nil, fmt.Errorf("%d bytes left over in a block", len(block))
		}
	}
}

func listPlanFor(schema []byte, version int) (*listPlan, error) {
	return listPlans.get(strconv.Itoa(version)+"\x00"+string(schema), func() (*listPlan, error) {
		writer, err := avro.Parse(string(schema))
		if err != nil {
			return nil, fmt.Errorf("parse the manifest list's Avro schema: %w", err)
		}
		p := &listPlan{inferred: inferListVersion(writer)}
		if version == 0 {
			version = p.inferred
		}
		reader := listReaderV2
		if version == 1 {
			reader, p.v1 = listReaderV1, true
		}
		if p.schema, err = avro.Resolve(writer, reader); err != nil {
			return nil, fmt.Errorf("resolve the manifest list's Avro schema: %w", err)
		}
		return p, nil
	})
}

// inferListVersion is iceberg-go's inferManifestListVersion: first_row_id
// (field id 520) makes v3, content (517) or sequence_number (515) v2.
func inferListVersion(sc *avro.Schema) int {
	version := 1
	for _, f := range sc.Root().Fields {
		id, ok := fieldID(f)
		switch {
		case ok && id == 520, !ok && f.Name == "first_row_id":
			return 3
		case ok && (id == 517 || id == 515), !ok && (f.Name == "content" || f.Name == "sequence_number"):
			version = 2
		}
	}
	return version
}

func (e *listEntry) build(version int) iceberg.ManifestFile {
	b := iceberg.NewManifestFile(version, e.Path, e.Len, e.SpecID, e.AddedSnapshotID).
		SequenceNum(e.SeqNumber, e.MinSeqNumber).
		Content(iceberg.ManifestContent(e.Content)).
		AddedFiles(e.AddedFilesCount).ExistingFiles(e.ExistingFilesCount).DeletedFiles(e.DeletedFilesCount).
		AddedRows(e.AddedRowsCount).ExistingRows(e.ExistingRowsCount).DeletedRows(e.DeletedRowsCount)
	if e.PartitionList != nil {
		b.Partitions(*e.PartitionList)
	}
	if e.Key != nil {
		b.KeyMetadata(*e.Key)
	}
	return b.Build()
}

func (e *listEntryV1) build() iceberg.ManifestFile {
	or := func(p *int32) int32 {
		if p == nil {
			return -1
		}
		return *p
	}
	or64 := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	b := iceberg.NewManifestFile(1, e.Path, e.Len, e.SpecID, or64(e.AddedSnapshotID)).
		AddedFiles(or(e.AddedFilesCount)).ExistingFiles(or(e.ExistingFilesCount)).DeletedFiles(or(e.DeletedFilesCount)).
		AddedRows(or64(e.AddedRowsCount)).ExistingRows(or64(e.ExistingRowsCount)).DeletedRows(or64(e.DeletedRowsCount))
	if e.PartitionList != nil {
		b.Partitions(*e.PartitionList)
	}
	if e.Key != nil {
		b.KeyMetadata(*e.Key)
	}
	return b.Build()
}
