package compaction

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
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
// columns of a batch one after the other. It serves every schema.
type pqarrowSink struct{ pw *pqarrow.FileWriter }

func (s pqarrowSink) writeBuffered(rec arrow.RecordBatch) error { return s.pw.WriteBuffered(rec) }
func (s pqarrowSink) newRowGroup() error                        { return s.pw.NewBufferedRowGroupChecked() }
func (s pqarrowSink) close() error                              { return s.pw.Close() }
func (s pqarrowSink) metadata() (*metadata.FileMetaData, error) { return s.pw.FileMetadata() }

// columnWriter writes a flat schema (every field one Parquet leaf) with
// the columns of each batch encoded and compressed at once, one goroutine
// per column up to the CPUs. pqarrow's FileWriter encodes them one after
// the other, and in the benchmarks that one goroutine (encoding, then zstd
// as pages fill) was the compaction's critical path: the readers and the
// collector waited on it while the second core idled.
//
// It produces what pqarrow's FileWriter produces: the same Parquet schema
// (pqarrow.ToParquet), the same key-value metadata with the stored Arrow
// schema, and each leaf written by pqarrow.WriteArrowToColumn with the
// definition levels pqarrow's path builder gives a top-level primitive
// (TestColumnWriterMatchesPqarrow compares the two byte for byte).
// Columns of one buffered row group are independent until it is closed:
// each has its own encoders, page buffer, statistics and bloom filter,
// and the zstd codec is safe for concurrent use; the row group and file
// are closed from one goroutine.
type columnWriter struct {
	fw      *file.Writer
	rgw     file.BufferedRowGroupWriter
	ctxs    []context.Context // one Arrow write context per column: each holds a scratch buffer
	maxDef  []int16           // 1 for an optional column, 0 for a required one
	levels  [][]int16         // definition levels, reused batch to batch
	workers int
}

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
// the schema is flat and more than one CPU can work, else pqarrow's.
func newParquetSink(as *arrow.Schema, w io.Writer, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties) (parquetSink, error) {
	workers := min(runtime.GOMAXPROCS(0), as.NumFields(), maxColumnWorkers)
	if workers > 1 {
		ps, err := pqarrow.ToParquet(as, props, aprops)
		if err != nil {
			return nil, err
		}
		if flatSchema(as, ps) {
			return newColumnWriter(as, ps, w, props, aprops, workers)
		}
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

func newColumnWriter(as *arrow.Schema, ps *schema.Schema, w io.Writer, props *parquet.WriterProperties, aprops pqarrow.ArrowWriterProperties, workers int) (*columnWriter, error) {
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
		fw:      fw,
		ctxs:    make([]context.Context, as.NumFields()),
		maxDef:  make([]int16, as.NumFields()),
		levels:  make([][]int16, as.NumFields()),
		workers: workers,
	}
	for i := range c.ctxs {
		c.ctxs[i] = pqarrow.NewArrowWriteContext(context.Background(), &aprops)
		c.maxDef[i] = ps.Column(i).MaxDefinitionLevel()
	}
	if err := c.newRowGroup(); err != nil {
		_ = fw.Close()
		return nil, err
	}
	return c, nil
}

func (c *columnWriter) newRowGroup() error {
	rgw, err := c.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	c.rgw = rgw
	return nil
}

func (c *columnWriter) writeBuffered(rec arrow.RecordBatch) error {
	n := int(rec.NumCols())
	if n != len(c.ctxs) {
		return fmt.Errorf("batch has %d columns, the file %d", n, len(c.ctxs))
	}
	errs := make([]error, n)
	var next atomic.Int32
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= n {
				return
			}
			errs[i] = c.writeColumn(i, rec.Column(i))
		}
	}
	var wg sync.WaitGroup
	for range c.workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return errors.Join(errs...)
}

// writeColumn writes one top-level primitive column with the levels
// pqarrow's path builder computes for it: none for a required column;
// for an optional one, the maximum level for each present value and 0
// for each null, the leaf counted nullable only when it has nulls.
func (c *columnWriter) writeColumn(i int, arr arrow.Array) error {
	cw, err := c.rgw.Column(i)
	if err != nil {
		return err
	}
	var def []int16
	nullable := false
	if c.maxDef[i] > 0 {
		def = c.levels[i][:0]
		if cap(def) < arr.Len() {
			def = make([]int16, 0, arr.Len())
		}
		def = def[:arr.Len()]
		present, null := c.maxDef[i], c.maxDef[i]-1
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
		c.levels[i] = def
	}
	return pqarrow.WriteArrowToColumn(c.ctxs[i], cw, arr, def, nil, nullable)
}

func (c *columnWriter) close() error { return c.fw.Close() }

func (c *columnWriter) metadata() (*metadata.FileMetaData, error) { return c.fw.FileMetadata() }
