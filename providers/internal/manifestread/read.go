package manifestread

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go"
)

// readers are the buffered readers of Read and ReadList, reused across
// files.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func getReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// entry is the projection of a manifest entry we decode (see readField).
type entry struct {
	Status     int32    `avro:"status"`
	Snapshot   *int64   `avro:"snapshot_id"`
	SeqNum     *int64   `avro:"sequence_number"`
	FileSeqNum *int64   `avro:"file_sequence_number"`
	Data       dataFile `avro:"data_file"`
}

type dataFile struct {
	Content            int32          `avro:"content"`
	Path               string         `avro:"file_path"`
	Format             string         `avro:"file_format"`
	Partition          map[string]any `avro:"partition"`
	RecordCount        int64          `avro:"record_count"`
	FileSize           int64          `avro:"file_size_in_bytes"`
	EqualityIDs        *[]int         `avro:"equality_ids"`
	SortOrder          *int           `avro:"sort_order_id"`
	FirstRowID         *int64         `avro:"first_row_id"`
	ReferencedDataFile *string        `avro:"referenced_data_file"`
	ContentOffset      *int64         `avro:"content_offset"`
	ContentSize        *int64         `avro:"content_size_in_bytes"`
}

// v1Entry is the entry of a v1 writer whose snapshot_id is a plain long.
type v1Entry struct {
	Status     int32    `avro:"status"`
	Snapshot   int64    `avro:"snapshot_id"`
	SeqNum     *int64   `avro:"sequence_number"`
	FileSeqNum *int64   `avro:"file_sequence_number"`
	Data       dataFile `avro:"data_file"`
}

// Read decodes the entries of manifest m from r and calls fn with each, in
// file order; DELETED entries are left out when discardDeleted is set. An
// error of fn stops the read and is returned. The entries are what
// iceberg-go's EntriesWithProjection returns for the fields this package
// decodes (readField): the same status, snapshot id and sequence numbers
// (inherited from m as iceberg-go inherits them), the same data file
// fields and partition values (converted to iceberg-go's types), the same
// first row ids; the column statistics, split offsets, key metadata and
// block size are nil or zero. The manifest's own metadata is checked
// against m as iceberg-go checks it. Any error means: read it with
// iceberg-go instead, whose answer is authoritative.
func Read(r io.Reader, m iceberg.ManifestFile, discardDeleted bool, fn func(iceberg.ManifestEntry) error) error {
	br := getReader(r)
	defer putReader(br)
	h, err := readHeader(br)
	if err != nil {
		return err
	}
	content, err := checkMeta(h.meta, m)
	if err != nil {
		return err
	}
	p, err := planFor(h.meta)
	if err != nil {
		return err
	}
	dec, release, err := codec(h.meta)
	if err != nil {
		return err
	}
	defer release()
	d := decoder{p: p, m: m, content: content, spec: iceberg.NewPartitionSpecID(int(m.PartitionSpecID()))}
	if content == iceberg.ManifestContentData && m.FirstRowID() != nil {
		d.inheritRowIDs, d.nextRowID = true, *m.FirstRowID()
		if d.nextRowID < 0 {
			return fmt.Errorf("first row ID must be non-negative: %d", d.nextRowID)
		}
	}
	bl := blocks{r: br, sync: h.sync, codec: dec}
	for {
		count, block, err := bl.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for range count {
			e, rest, err := d.decode(block)
			if err != nil {
				return err
			}
			if len(rest) == len(block) {
				return errors.New("a manifest entry of zero bytes")
			}
			block = rest
			if discardDeleted && e.Status() == iceberg.EntryStatusDELETED {
				continue
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(block) != 0 {
			return fmt.Errorf("%d bytes left over in a block", len(block))
		}
	}
}

// checkMeta checks the manifest's own metadata against its manifest list
// entry, as iceberg-go's newManifestReader does, and returns its content.
func checkMeta(meta map[string][]byte, m iceberg.ManifestFile) (iceberg.ManifestContent, error) {
	version := 1
	if raw := meta["format-version"]; len(raw) > 0 {
		v, err := strconv.Atoi(string(raw))
		if err != nil {
			return 0, fmt.Errorf("manifest file's 'format-version' metadata is invalid: %w", err)
		}
		version = v
	}
	if version < 1 || version > 3 || version > m.Version() {
		return 0, fmt.Errorf("manifest file's 'format-version' metadata is %d (the manifest list is v%d)", version, m.Version())
	}
	var content iceberg.ManifestContent
	switch c := string(meta["content"]); {
	case c == "" && version == 1, c == "data":
		content = iceberg.ManifestContentData
	case c == "deletes":
		content = iceberg.ManifestContentDeletes
	default:
		return 0, fmt.Errorf("manifest file's 'content' metadata is %q", c)
	}
	if content != m.ManifestContent() {
		return 0, fmt.Errorf("manifest file's 'content' metadata indicates %q, but entry from manifest list indicates %q", content, m.ManifestContent())
	}
	return content, nil
}

// decoder decodes the entries of one manifest.
type decoder struct {
	p             *plan
	m             iceberg.ManifestFile
	content       iceberg.ManifestContent
	spec          iceberg.PartitionSpec
	inheritRowIDs bool
	nextRowID     int64
}

// decode decodes one entry from block and returns it with the rest.
func (d *decoder) decode(block []byte) (iceberg.ManifestEntry, []byte, error) {
	var e entry
	var rest []byte
	var err error
	if d.p.v1Snapshot {
		var v1 v1Entry
		rest, err = d.p.schema.Decode(block, &v1)
		e = entry{Status: v1.Status, Snapshot: &v1.Snapshot, SeqNum: v1.SeqNum, FileSeqNum: v1.FileSeqNum, Data: v1.Data}
	} else {
		rest, err = d.p.schema.Decode(block, &e)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("decode a manifest entry: %w", noEOF(err))
	}
	out, err := d.build(&e)
	return out, rest, err
}

// build checks a decoded entry as iceberg-go's ReadEntry does, fills in
// what it inherits from the manifest, and builds iceberg-go's own
// ManifestEntry with its exported constructors.
func (d *decoder) build(e *entry) (iceberg.ManifestEntry, error) {
	status := iceberg.ManifestEntryStatus(e.Status)
	switch status {
	case iceberg.EntryStatusEXISTING, iceberg.EntryStatusADDED, iceberg.EntryStatusDELETED:
	default:
		return nil, fmt.Errorf("manifest entry has invalid status: %d", e.Status)
	}
	df := &e.Data
	content := iceberg.ManifestEntryContent(df.Content)
	switch content {
	case iceberg.EntryContentData:
		if d.content != iceberg.ManifestContentData {
			return nil, errors.New("data file found in delete manifest")
		}
	case iceberg.EntryContentPosDeletes, iceberg.EntryContentEqDeletes:
		if d.content != iceberg.ManifestContentDeletes {
			return nil, errors.New("delete file found in data manifest")
		}
	default:
		return nil, fmt.Errorf("manifest entry has invalid content: %d", df.Content)
	}
	// Inheritance (iceberg-go's manifestEntry.inherit).
	if e.Snapshot == nil {
		s := d.m.SnapshotID()
		e.Snapshot = &s
	}
	if seq := d.m.SequenceNum(); seq != -1 {
		inherits := seq == 0 || status == iceberg.EntryStatusADDED
		if e.SeqNum == nil && inherits {
			e.SeqNum = &seq
		}
		if e.FileSeqNum == nil && inherits {
			e.FileSeqNum = &seq
		}
	}
	// First row id inheritance (iceberg-go's ReadEntry).
	if d.inheritRowIDs && status != iceberg.EntryStatusDELETED && df.FirstRowID == nil {
		id := d.nextRowID
		if df.RecordCount < 0 {
			return nil, fmt.Errorf("cannot inherit first row ID for data file %q: record count must be non-negative: %d", df.Path, df.RecordCount)
		}
		if id > math.MaxInt64-df.RecordCount {
			return nil, fmt.Errorf("cannot inherit first row ID for data file %q: row ID overflows", df.Path)
		}
		df.FirstRowID = &id
		d.nextRowID = id + df.RecordCount
	}
	b, err := iceberg.NewDataFileBuilder(d.spec, content, df.Path, iceberg.FileFormat(df.Format), d.partition(df.Partition), nil, nil, df.RecordCount, df.FileSize)
	if err != nil {
		return nil, err
	}
	if df.EqualityIDs != nil {
		b.EqualityFieldIDs(*df.EqualityIDs)
	}
	if df.SortOrder != nil {
		b.SortOrderID(*df.SortOrder)
	}
	if df.FirstRowID != nil {
		b.FirstRowID(*df.FirstRowID)
	}
	if df.ReferencedDataFile != nil {
		b.ReferencedDataFile(*df.ReferencedDataFile)
	}
	if df.ContentOffset != nil {
		b.ContentOffset(*df.ContentOffset)
	}
	if df.ContentSize != nil {
		b.ContentSizeInBytes(*df.ContentSize)
	}
	return iceberg.NewManifestEntry(status, e.Snapshot, e.SeqNum, e.FileSeqNum, b.Build()), nil
}

// partition keys the decoded partition tuple by field id, with values
// converted as iceberg-go converts them; nil for an unpartitioned file.
func (d *decoder) partition(byName map[string]any) map[int]any {
	if len(byName) == 0 {
		return nil
	}
	out := make(map[int]any, len(byName))
	for name, v := range byName {
		if id, ok := d.p.nameToID[name]; ok {
			out[id] = d.p.convert(v, id)
		}
	}
	return out
}
