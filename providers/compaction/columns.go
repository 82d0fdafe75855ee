package compaction

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// parquetSink is one open output file: pqarrow's FileWriter, or
// columnWriter for flat schemas.
type parquetSink interface {
	// writeBuffered appends a batch to the current row group.
	writeBuffered(rec arrow.RecordBatch) error
	// newRowGroup closes the current row group (writing it out) and opens
	// the next.
	newRowGroup() error
	close() error
	metadata() (*metadata.FileMetaData, error)
}

// pqarrowSink writes through pqarrow's FileWriter, which encodes the
// columns of a batch one after the other. It serves the schemas
// columnWriter does not (nested fields), whose data pages end on size
// only: arrow-go has no page row limit.
type pqarrowSink struct{ pw *pqarrow.FileWriter }

func (s pqarrowSink) writeBuffered(rec arrow.RecordBatch) error { return s.pw.WriteBuffered(rec) }
func (s pqarrowSink) newRowGroup() error                        { return s.pw.NewBufferedRowGroupChecked() }
func (s pqarrowSink) close() error                              { return s.pw.Close() }
func (s pqarrowSink) metadata() (*metadata.FileMetaData, error) { return s.pw.FileMetadata() }

// columnWriter writes a flat schema (every field one Parquet leaf) with
// each column encoded and compressed in a goroutine of its own, at most
// as many at once as there are CPUs (up to maxColumnWorkers). pqarrow's
// FileWriter encodes a batch's columns one after the other, and in the
// benchmarks that one goroutine (encoding, then zstd as pages fill) was
// the compaction's critical path: the readers and the collector waited on
// it while the second core idled. A batch is handed to every column's
// queue and writeBuffered returns: the columns do not wait for each other
// batch by batch (their costs differ: a string column can take a third of
// the work), only at a row group's end and the file's.
//
// It produces what pqarrow's FileWriter produces: the same Parquet schema
// (pqarrow.ToParquet), the same key-value metadata with the stored Arrow
// schema, and each leaf written by pqarrow.WriteArrowToColumn with the
// definition levels pqarrow's path builder gives a top-level primitive
// (TestColumnWriterMatchesPqarrow compares the two byte for byte), except
// that a data page also ends at the table's page row limit (pageRows).
// Columns of one buffered row group are independent until it is closed:
// each has its own encoders, page buffer, statistics and bloom filter,
// and the zstd codec is safe for concurrent use; the row group and file
// are closed from the caller's goroutine once every queue is empty.
type columnWriter struct {
	fw     *file.Writer
	rgw    file.BufferedRowGroupWriter // replaced only while every queue is empty
	cols   []*columnQueue
	tokens chan struct{} // one per column encoding at the moment

	mu      sync.Mutex
	err     error // the first column error; later batches are dropped
	stopped bool

	// Batches not yet written by every column (inflight) hold their
	// buffers: at most maxQueued bytes of them (one batch whatever its
	// size), so a scan of large row groups (iceberg-go reads up to 131,072
	// rows per batch) is written one batch at a time, as pqarrow's writer
	// would, instead of keeping columnQueueDepth more alive. A row group
	// or the file closes once inflight is back to 0.
	qmu       sync.Mutex
	qcond     *sync.Cond
	inflight  int
	queued    int64
	maxQueued int64
}

// queuedBatch is one batch in the column queues: its size, and how many
// columns still have to write it.
type queuedBatch struct {
	size int64
	left atomic.Int32
}

// queuedArray is one column of a queued batch.
type queuedArray struct {
	arr   arrow.Array
	batch *queuedBatch
}

// columnQueue is one column's pipeline: its arrays in batch order, its
// Arrow write context (a scratch buffer) and its definition levels.
type columnQueue struct {
	i      int
	ctx    context.Context
	maxDef int16 // 1 for an optional column, 0 for a required one
	levels []int16
	in     chan queuedArray

	// cval is the one value every row of this column holds in this file
	// (the source of an identity partition, string or binary), or nil.
	// Such a column is written as dictionary indices (constantDict).
	cval   []byte
	cdense bool        // this row group writes it as it is (reset by columnWriter.newRowGroup)
	cdict  arrow.Array // the one-value dictionary, made at the first use
	zeros  []byte      // int32 zeros: the indices
	direct int         // writes done as indices (for tests)

	// rows is how many rows the column chunk's current data page holds,
	// and pageRows the most it may (writePaged).
	rows, pageRows int64
}

// columnQueueDepth bounds the batches a column may lag behind the reader.
const columnQueueDepth = 2

// flatSchema reports whether every field of as is a single Parquet leaf,
// which is when columnWriter can compute the definition levels itself.
func flatSchema(as *arrow.Schema, ps *schema.Schema) bool {
	if ps.NumColumns() != as.NumFields() {
		return false
	}
	for _, f := range as.Fields() {
		t := f.Type
		if ext, ok := t.(arrow.ExtensionType); ok {
			t = ext.StorageType()
		}
		if _, nested := t.(arrow.NestedType); nested || t.ID() == arrow.DICTIONARY || t.ID() == arrow.RUN_END_ENCODED {
			return false
		}
	}
	return true
}

// newParquetSink opens the writer for one output file: columnWriter when
// the schema is flat (on any number of CPUs, so that the files are the
// same on every machine), else pqarrow's. consts maps the index of a
// top-level string or binary column to the one value all its rows hold
// (constantDict); it may be nil.
func newParquetSink(as *arrow.Schema, w io.Writer, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties, maxQueued int64, consts map[int][]byte) (parquetSink, error) {
	ps, err := pqarrow.ToParquet(as, props, aprops)
	if err != nil {
		return nil, err
	}
	if flatSchema(as, ps) {
		workers := max(1, min(runtime.GOMAXPROCS(0), as.NumFields(), maxColumnWorkers))
		return newColumnWriter(as, ps, w, props, aprops, workers, maxQueued, consts)
	}
	pw, err := pqarrow.NewFileWriter(as, w, props, aprops)
	if err != nil {
		return nil, err
	}
	return pqarrowSink{pw}, nil
}

// maxColumnWorkers bounds the columns encoded at once: each compressing
// column holds a zstd encoder (about 3.5 MiB with LowMemoryZstd).
const maxColumnWorkers = 4

func newColumnWriter(as *arrow.Schema, ps *schema.Schema, w io.Writer, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties, workers int, maxQueued int64, consts map[int][]byte) (*columnWriter, error) {
	// The key-value metadata pqarrow.NewFileWriter writes: the Arrow
	// schema's own, then the schema itself (WithStoreSchema). pqarrow
	// first renames list elements; a flat schema has none.
	meta := make(metadata.KeyValueMetadata, 0, as.Metadata().Len()+1)
	for i, k := range as.Metadata().Keys() {
		if err := meta.Append(k, as.Metadata().Values()[i]); err != nil {
			return nil, err
		}
	}
	if err := meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(as, props.Allocator()))); err != nil {
		return nil, err
	}
	fw, err := file.NewParquetWriterWithError(w, ps.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	c := &columnWriter{
		fw:        fw,
		cols:      make([]*columnQueue, as.NumFields()),
		tokens:    make(chan struct{}, workers),
		maxQueued: maxQueued,
	}
	c.qcond = sync.NewCond(&c.qmu)
	for i := range c.cols {
		c.cols[i] = &columnQueue{
			i:      i,
			ctx:    pqarrow.NewArrowWriteContext(context.Background(), &aprops),
			maxDef: ps.Column(i).MaxDefinitionLevel(),
			in:     make(chan queuedArray, columnQueueDepth),
			cval:   consts[i],
			// parquetWriterProps makes the write batch the table's
			// write.parquet.page-row-limit, as iceberg-go does.
			pageRows: props.WriteBatchSize(),
		}
	}
	if err := c.newRowGroup(); err != nil {
		_ = fw.Close()
		return nil, err
	}
	for _, q := range c.cols {
		go c.run(q)
	}
	return c, nil
}

// run writes q's arrays in order until its queue is closed.
func (c *columnWriter) run(q *columnQueue) {
	for qa := range q.in {
		if c.failed() == nil {
			c.tokens <- struct{}{}
			err := c.writeColumn(q, qa.arr)
			<-c.tokens
			if err != nil {
				c.mu.Lock()
				if c.err == nil {
					c.err = fmt.Errorf("column %d: %w", q.i, err)
				}
				c.mu.Unlock()
			}
		}
		qa.arr.Release()
		if qa.batch.left.Add(-1) == 0 {
			c.qmu.Lock()
			c.inflight--
			c.queued -= qa.batch.size
			c.qcond.Broadcast()
			c.qmu.Unlock()
		}
	}
}

// drain waits until every column has written every batch it was given.
func (c *columnWriter) drain() {
	c.qmu.Lock()
	for c.inflight > 0 {
		c.qcond.Wait()
	}
	c.qmu.Unlock()
}

func (c *columnWriter) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// newRowGroup waits for every column to write what it was given, closes
// the row group (writing it to the file) and opens the next.
func (c *columnWriter) newRowGroup() error {
	c.drain()
	if err := c.failed(); err != nil {
		return err
	}
	rgw, err := c.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	c.rgw = rgw
	// The column goroutines are idle (drained): each new column chunk
	// decides afresh.
	for _, q := range c.cols {
		q.cdense = false
		q.rows = 0
	}
	return nil
}

// writeBuffered queues the batch's columns (each retained until written)
// and returns; it blocks while a column is columnQueueDepth batches behind
// or the batches not yet written hold more than maxQueued bytes. An error of an earlier batch is returned here or at the next
// row group or close.
func (c *columnWriter) writeBuffered(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != len(c.cols) {
		return fmt.Errorf("batch has %d columns, the file %d", rec.NumCols(), len(c.cols))
	}
	if err := c.failed(); err != nil {
		return err
	}
	b := &queuedBatch{size: util.TotalRecordSize(rec)}
	b.left.Store(int32(len(c.cols)))
	c.qmu.Lock()
	for c.queued > 0 && c.queued+b.size > c.maxQueued {
		c.qcond.Wait()
	}
	c.inflight++
	c.queued += b.size
	c.qmu.Unlock()
	for i, q := range c.cols {
		arr := rec.Column(i)
		arr.Retain()
		q.in <- queuedArray{arr: arr, batch: b}
	}
	return nil
}

// writeColumn writes one top-level primitive column with the levels
// pqarrow's path builder computes for it: none for a required column;
// for an optional one, the maximum level for each present value and 0
// for each null, the leaf counted nullable only when it has nulls.
func (c *columnWriter) writeColumn(q *columnQueue, arr arrow.Array) error {
	cw, err := c.rgw.Column(q.i)
	if err != nil {
		return err
	}
	var def []int16
	nullable := false
	if q.maxDef > 0 {
		def = q.levels[:0]
		if cap(def) < arr.Len() {
			def = make([]int16, 0, arr.Len())
		}
		def = def[:arr.Len()]
		present, null := q.maxDef, q.maxDef-1
		if arr.NullN() == 0 {
			for j := range def {
				def[j] = present
			}
		} else {
			nullable = true
			for j := range def {
				if arr.IsValid(j) {
					def[j] = present
				} else {
					def[j] = null
				}
			}
		}
		q.levels = def
	}
	return q.writePaged(cw, arr, def, nullable)
}

// pageFlusher is what arrow-go's column chunk writers do beside
// file.ColumnChunkWriter: cut the current data page.
type pageFlusher interface{ FlushCurrentPage() error }

// writePaged writes arr (and its levels) to cw, ending a data page
// whenever it holds q.pageRows rows.
//
// Why: Iceberg's write.parquet.page-row-limit (20,000 by default) caps the
// rows of a data page, and Iceberg Java (parquet-mr) and Arrow C++ (so
// PyIceberg) both honor it. arrow-go ends a page only on size, checking
// after each write batch: its pages of narrow columns ran to 1 MiB, about
// 130,000 rows of a long, so readers had 6x coarser page statistics than
// Spark's files give them, and each column being encoded held a 2 MiB
// buffer (the next power of two past the page) and a 1 MiB compression
// buffer. arrow-go still ends a page early on size (page-size-bytes); a
// write during which a page went out starts the count again. (A write that
// makes a dictionary fall back to plain also writes pages, the dictionary
// and the ones it held, but not the current one: that one page of the
// chunk may then hold up to twice the limit.)
func (q *columnQueue) writePaged(cw file.ColumnChunkWriter, arr arrow.Array, def []int16, nullable bool) error {
	flusher, ok := cw.(pageFlusher)
	n := int64(arr.Len())
	if !ok || q.pageRows <= 0 {
		return q.writeArray(cw, arr, def, nullable)
	}
	for off := int64(0); off < n; {
		take := min(n-off, q.pageRows-q.rows)
		part := arr
		if take != n {
			part = array.NewSlice(arr, off, off+take)
		}
		var levels []int16
		if def != nil {
			levels = def[off : off+take]
		}
		// Every page written (data, or the dictionary on a fallback)
		// adds to TotalBytesWritten.
		before := cw.TotalBytesWritten()
		err := q.writeArray(cw, part, levels, nullable)
		if part != arr {
			part.Release()
		}
		if err != nil {
			return err
		}
		off += take
		if cw.TotalBytesWritten() != before {
			q.rows = 0
			continue
		}
		if q.rows += take; q.rows >= q.pageRows {
			if err := flusher.FlushCurrentPage(); err != nil {
				return err
			}
			q.rows = 0
		}
	}
	return nil
}

// writeArray writes arr to cw as pqarrow does, as dictionary indices when
// it is the column's one value (constantDict).
func (q *columnQueue) writeArray(cw file.ColumnChunkWriter, arr arrow.Array, def []int16, nullable bool) error {
	if d := q.constantDict(cw, arr); d != nil {
		defer d.Release()
		arr = d
	}
	return pqarrow.WriteArrowToColumn(q.ctx, cw, arr, def, nil, nullable)
}

// constantDict returns arr as a dictionary array (a new reference) when
// arr is q.cval repeated, the column chunk is still dictionary encoded
// and every write of this row group so far was, or nil to write arr as
// it is.
//
// Why: a column that holds one value per file, the source of an identity
// partition (a group is one partition), is dictionary encoded by hashing
// every value into the encoder's memo table (BinaryMemoTable: 0.7 s of
// the 10M-row sort's 17 s, for a two-byte region). Given the dictionary
// and the indices, pqarrow seeds the encoder with the dictionary once and
// appends the indices (PutDictionary, PutIndices): the same dictionary
// page, indices and statistics, the same file byte for byte
// (TestColumnWriterMatchesPqarrow). The value comes from the partition,
// and every batch is checked against it: a write that holds anything
// else (a file whose rows disagree with its partition) goes through
// pqarrow as it is, and so does the rest of that row group's column,
// since pqarrow may then fall back to plain encoding (still the same
// values, another encoding).
func (q *columnQueue) constantDict(cw file.ColumnChunkWriter, arr arrow.Array) arrow.Array {
	if q.cval == nil || q.cdense {
		return nil
	}
	v, ok := constantValue(arr)
	if !ok || !bytes.Equal(v, q.cval) || cw.CurrentEncoder().Encoding() != parquet.Encodings.PlainDict {
		q.cdense = true
		return nil
	}
	if q.cdict == nil { // the column's type is the file schema's, the same for every write
		offs := arrow.Int32Traits.CastToBytes([]int32{0, int32(len(q.cval))})
		d := array.NewData(arr.DataType(), 1, []*memory.Buffer{nil, memory.NewBufferBytes(offs), memory.NewBufferBytes(q.cval)}, nil, 0, 0)
		q.cdict = array.MakeFromData(d)
		d.Release()
	}
	q.direct++
	n := arr.Len()
	if len(q.zeros) < 4*n {
		q.zeros = make([]byte, 4*n)
	}
	idx := array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nil, memory.NewBufferBytes(q.zeros[:4*n])}, nil, 0, 0)
	defer idx.Release()
	indices := array.MakeFromData(idx)
	defer indices.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arr.DataType()}
	// The same dictionary object every time: pqarrow then knows it
	// unchanged without comparing or recounting it.
	return array.NewDictionaryArray(dt, indices, q.cdict)
}

// constantValue is arr's one value when arr is a string or binary array
// (32-bit offsets) of at least one value, no nulls, every value the same.
func constantValue(arr arrow.Array) ([]byte, bool) {
	var offs []int32
	var data []byte
	switch a := arr.(type) {
	case *array.String:
		offs, data = a.ValueOffsets(), a.ValueBytes()
	case *array.Binary:
		offs, data = a.ValueOffsets(), a.ValueBytes()
	default:
		return nil, false
	}
	if arr.Len() == 0 || arr.NullN() > 0 {
		return nil, false
	}
	base := offs[0]
	first := data[:offs[1]-base]
	for i := 1; i < arr.Len(); i++ {
		if !bytes.Equal(data[offs[i]-base:offs[i+1]-base], first) {
			return nil, false
		}
	}
	return first, true
}

// close waits for the columns, stops their goroutines and writes the
// footer. It may be called again (abort after a failed close).
func (c *columnWriter) close() error {
	c.drain()
	if !c.stopped {
		c.stopped = true
		for _, q := range c.cols {
			close(q.in)
		}
	}
	err := c.failed()
	if cerr := c.fw.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *columnWriter) metadata() (*metadata.FileMetaData, error) { return c.fw.FileMetadata() }
