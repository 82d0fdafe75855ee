package compaction

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icewright/icewright/diff"
)

// rollingWriter writes one partition's rows, in the order given, into
// Parquet files of about the target size.
//
// It drives pqarrow itself rather than iceberg-go's WriteRecords because
// WriteRecords (1) re-sorts every batch by the table's default order, which
// would scramble a bucket order or a z-order we produced, (2) rolls only on
// flushed bytes, so with the default 128 MiB row group a file overshoots a
// small target by a whole row group, and (3) never records sort_order_id.
// The DataFile (stats, bounds, split offsets, sort_order_id) is then built by
// iceberg-go's own DataFileFromMetadata from the footer, so the manifest
// entry is exactly what iceberg-go would have written.
type rollingWriter struct {
	ctx         context.Context
	fs          icebergio.WriteFileIO
	loc         table.LocationProvider
	iceSchema   *iceberg.Schema
	arrowSchema *arrow.Schema // with PARQUET:field_id metadata
	spec        iceberg.PartitionSpec
	partition   map[int]any
	partPath    string
	props       iceberg.Properties
	wprops      *parquet.WriterProperties
	mem         memory.Allocator
	consts      map[int][]byte // columns of one value (identityConstants)

	target        int64
	rowGroupBytes int64
	rowGroupRows  int64
	sortOrderID   int
	formatVersion int
	filePrefix    string

	bytesPerRow float64 // estimate of encoded bytes per row, refined per flush

	cur     *openFile
	seq     int
	files   []iceberg.DataFile
	created []string // every path opened, for cleanup on abort
	rows    int64
}

type openFile struct {
	path       string
	counter    *countingWriter
	pw         parquetSink
	rows       int64
	rgRows     int64
	flushedRow int64 // rows in closed row groups
}

type countingWriter struct {
	w      icebergio.FileWriter
	n      int64
	closed bool
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	return c.w.Close()
}

type writerConfig struct {
	tbl          *table.Table
	spec         iceberg.PartitionSpec
	partition    map[int]any
	target       int64
	sortOrderID  int
	bytesPerRow  float64
	rowGroupCap  int64 // upper bound for row-group bytes (memory)
	groupOrdinal int
	lineage      bool // write the v3 row-lineage columns
}

func newRollingWriter(ctx context.Context, cfg writerConfig) (*rollingWriter, error) {
	tbl := cfg.tbl
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table io: %w", err)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("table io %T cannot write files", fsys)
	}
	loc, err := tbl.LocationProvider()
	if err != nil {
		return nil, fmt.Errorf("location provider: %w", err)
	}
	props := tbl.Properties()
	sc := tbl.Schema()
	if cfg.lineage {
		// v3: the files carry each row's _row_id and
		// _last_updated_sequence_number, so row identity survives the rewrite.
		sc = iceberg.SchemaWithRowLineage(sc)
	}
	as, err := table.SchemaToArrowSchemaWithOptions(sc, table.ArrowSchemaOptions{
		IncludeFieldIDs: true,
		TableProperties: props,
	})
	if err != nil {
		return nil, fmt.Errorf("arrow schema: %w", err)
	}
	wprops, err := parquetWriterProps(props, as)
	if err != nil {
		return nil, err
	}
	rgBytes := rowGroupBytes(props, cfg.target, cfg.rowGroupCap)
	partPath := ""
	if !cfg.spec.IsUnpartitioned() {
		partPath = specPath(cfg.spec, cfg.partition, sc)
		if strings.Contains(partPath, "%") && isFileURI(loc.NewDataLocation("f")) {
			// iceberg-go's local IO percent-decodes a file:// URI: the
			// file recorded as s_trunc=%C5%BC/... would be created as
			// s_trunc=żó/..., where DuckDB, Java's Hadoop IO and Spark
			// look for the literal path (so do Java and PyIceberg write
			// it) and find nothing. A path without escapes means the
			// same to every reader, so such a file goes into the data
			// directory itself; a Hive-style directory is a convenience,
			// the partition is in the manifest. On object stores
			// iceberg-go keeps keys raw, as the others do.
			partPath = ""
		}
	}
	bpr := cfg.bytesPerRow
	if bpr <= 0 {
		bpr = 64
	}
	return &rollingWriter{
		ctx:           ctx,
		fs:            wfs,
		loc:           loc,
		iceSchema:     sc,
		arrowSchema:   as,
		spec:          cfg.spec,
		partition:     cfg.partition,
		partPath:      partPath,
		props:         props,
		wprops:        wprops,
		mem:           memory.DefaultAllocator,
		target:        cfg.target,
		rowGroupBytes: rgBytes,
		rowGroupRows:  propInt64(props, table.ParquetRowGroupLimitKey, table.ParquetRowGroupLimitDefault),
		sortOrderID:   cfg.sortOrderID,
		formatVersion: tbl.Metadata().Version(),
		filePrefix:    fmt.Sprintf("%05d-%d-%s", cfg.groupOrdinal, 0, uuid.NewString()),
		bytesPerRow:   bpr,
		consts:        identityConstants(tbl, cfg.spec, cfg.partition, sc, as),
	}, nil
}

// identityConstants maps the index of each top-level string or binary
// column that is the source of an identity partition field
// (identitySources) to the partition's value (not null, not empty): what
// every row of the group's files holds in that column, which the column
// writer then writes as dictionary indices instead of hashing each value
// (constantDict). It checks every batch against the value.
func identityConstants(tbl *table.Table, spec iceberg.PartitionSpec, part map[int]any, sc *iceberg.Schema, as *arrow.Schema) map[int][]byte {
	var out map[int][]byte
	for _, c := range identitySources(tbl, spec, part) {
		var v []byte
		switch x := c.value.(type) {
		case string:
			v = []byte(x)
		case []byte:
			v = bytes.Clone(x)
		}
		i := slices.IndexFunc(sc.Fields(), func(f iceberg.NestedField) bool { return f.ID == c.fieldID })
		if len(v) == 0 || i < 0 || i >= as.NumFields() {
			continue
		}
		if id := as.Field(i).Type.ID(); id == arrow.STRING || id == arrow.BINARY {
			if out == nil {
				out = map[int][]byte{}
			}
			out[i] = v
		}
	}
	return out
}

// rowGroupBytes is the row-group size the writer closes groups at
// (diff.WriterRowGroupBytes, the rule the plan's estimate shares).
func rowGroupBytes(props iceberg.Properties, target, memCap int64) int64 {
	var configured int64
	if _, set := props[table.ParquetRowGroupSizeBytesKey]; set {
		configured = max(propInt64(props, table.ParquetRowGroupSizeBytesKey, table.ParquetRowGroupSizeBytesDefault), 1)
	}
	return diff.WriterRowGroupBytes(configured, target, memCap)
}

// isFileURI reports whether location is a file: URI (not a plain path,
// which iceberg-go uses as it is).
func isFileURI(location string) bool {
	scheme, _, ok := strings.Cut(location, ":")
	return ok && strings.EqualFold(scheme, "file")
}

// partitionRecord is a partition tuple in spec field order.
type partitionRecord []any

func (p partitionRecord) Size() int            { return len(p) }
func (p partitionRecord) Get(pos int) any      { return p[pos] }
func (p partitionRecord) Set(pos int, val any) { p[pos] = val }

func propInt64(p iceberg.Properties, key string, def int64) int64 {
	if v, ok := p[key]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return def
}

// parquetWriterProps mirrors iceberg-go's table-property mapping (its
// GetWriteProperties is internal), so outputs use the table's codec, level,
// page, dictionary and bloom-filter settings, and, like Iceberg Java,
// parquet-mr's cost-based dictionary fallback on every leaf (without it a
// high-cardinality column keeps a useless dictionary: files ~50% larger).
func parquetWriterProps(p iceberg.Properties, as *arrow.Schema) (*parquet.WriterProperties, error) {
	codecName := p.Get(table.ParquetCompressionKey, table.ParquetCompressionDefault)
	var codec compress.Compression
	switch codecName {
	case "snappy":
		codec = compress.Codecs.Snappy
	case "zstd":
		codec = compress.Codecs.Zstd
	case "uncompressed", "none":
		codec = compress.Codecs.Uncompressed
	case "gzip":
		codec = compress.Codecs.Gzip
	case "brotli":
		codec = compress.Codecs.Brotli
	case "lz4":
		codec = compress.Codecs.Lz4
	case "lz4raw":
		codec = compress.Codecs.Lz4Raw
	default:
		// iceberg-go silently falls back to uncompressed; writing a table
		// with a codec nobody asked for is worse than refusing.
		return nil, fmt.Errorf("%s = %q is not a codec icewright can write", table.ParquetCompressionKey, codecName)
	}
	version := parquet.DataPageV2
	if p.Get(table.ParquetPageVersionKey, table.ParquetPageVersionDefault) == "1" {
		version = parquet.DataPageV1
	}
	level := compress.DefaultCompressionLevel
	if lvl, ok := p[table.ParquetCompressionLevelKey]; ok && lvl != "" {
		n, err := strconv.Atoi(lvl)
		if err != nil {
			return nil, fmt.Errorf("%s = %q: %w", table.ParquetCompressionLevelKey, lvl, err)
		}
		level = n
	}
	opts := []parquet.WriterProperty{
		parquet.WithMaxRowGroupLength(propInt64(p, table.ParquetRowGroupLimitKey, table.ParquetRowGroupLimitDefault)),
		parquet.WithDataPageSize(propInt64(p, table.ParquetPageSizeBytesKey, table.ParquetPageSizeBytesDefault)),
		parquet.WithDataPageVersion(version),
		parquet.WithBatchSize(propInt64(p, table.ParquetPageRowLimitKey, table.ParquetPageRowLimitDefault)),
		parquet.WithDictionaryPageSizeLimit(propInt64(p, table.ParquetDictSizeBytesKey, table.ParquetDictSizeBytesDefault)),
		parquet.WithCompression(codec),
		parquet.WithCompressionLevel(level),
		parquet.WithStats(true),
		parquet.WithMaxBloomFilterBytes(propInt64(p, table.ParquetBloomFilterMaxBytesKey, table.ParquetBloomFilterMaxBytesDefault)),
		parquet.WithDictionaryDefault(javaBool(p.Get("parquet.enable.dictionary", "true"))),
	}
	for k, v := range p {
		if col, ok := strings.CutPrefix(k, "write.parquet.bloom-filter-enabled.column."); ok && col != "" {
			opts = append(opts, parquet.WithBloomFilterEnabledFor(col, javaBool(v)))
		}
		if col, ok := strings.CutPrefix(k, "write.parquet.dict-encoding-enabled.column."); ok && col != "" {
			opts = append(opts, parquet.WithDictionaryFor(col, javaBool(v)))
		}
	}
	base := parquet.NewWriterProperties(opts...)
	ps, err := pqarrow.ToParquet(as, base, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("parquet schema: %w", err)
	}
	for i := range ps.NumColumns() {
		opts = append(opts, parquet.WithDictionaryCostFallbackFor(ps.Column(i).Path(), true))
	}
	return parquet.NewWriterProperties(opts...), nil
}

// javaBool parses like Java's Boolean.parseBoolean, as Iceberg does.
func javaBool(v string) bool { return strings.EqualFold(v, "true") }

func (w *rollingWriter) open() error {
	w.seq++
	name := fmt.Sprintf("%s-%05d.parquet", w.filePrefix, w.seq)
	if w.partPath != "" {
		name = w.partPath + "/" + name
	}
	path := w.loc.NewDataLocation(name)
	fw, err := w.fs.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w.created = append(w.created, path)
	cw := &countingWriter{w: fw}
	// Batches waiting for the column encoders hold at most one row
	// group's worth of bytes (the writer's own memory bound).
	pw, err := newParquetSink(w.arrowSchema, cw, w.wprops,
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(w.mem), pqarrow.WithStoreSchema()), w.rowGroupBytes, w.consts)
	if err != nil {
		_ = cw.Close()
		return fmt.Errorf("open parquet writer %s: %w", path, err)
	}
	w.cur = &openFile{path: path, counter: cw, pw: pw}
	return nil
}

// estimate is the current file's expected size if closed now.
func (w *rollingWriter) estimate() float64 {
	return float64(w.cur.counter.n) + float64(w.cur.rgRows)*w.bytesPerRow
}

// write appends a batch (in order). It takes ownership of nothing: the
// caller still releases rec.
func (w *rollingWriter) write(rec arrow.RecordBatch) error {
	rec, err := w.conform(rec)
	if err != nil {
		return err
	}
	defer rec.Release()
	n := rec.NumRows()
	var off int64
	for off < n {
		if w.cur == nil {
			if err := w.open(); err != nil {
				return err
			}
		}
		room := (float64(w.target) - w.estimate()) / w.bytesPerRow
		rgRoom := min(float64(w.rowGroupBytes)/w.bytesPerRow-float64(w.cur.rgRows),
			float64(w.rowGroupRows-w.cur.rgRows))
		take := int64(min(room, rgRoom))
		take = max(take, 1)
		take = min(take, n-off)
		slice := rec.NewSlice(off, off+take)
		err := w.cur.pw.writeBuffered(slice)
		slice.Release()
		if err != nil {
			return fmt.Errorf("write %s: %w", w.cur.path, err)
		}
		off += take
		w.cur.rows += take
		w.cur.rgRows += take
		w.rows += take
		if w.estimate() >= float64(w.target) {
			if err := w.closeFile(); err != nil {
				return err
			}
			continue
		}
		if float64(w.cur.rgRows)*w.bytesPerRow >= float64(w.rowGroupBytes) || w.cur.rgRows >= w.rowGroupRows {
			if err := w.flushRowGroup(); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushRowGroup closes the buffered row group, which writes it out, and
// recalibrates bytes per row from what really reached the file.
func (w *rollingWriter) flushRowGroup() error {
	before := w.cur.counter.n
	if err := w.cur.pw.newRowGroup(); err != nil {
		return fmt.Errorf("flush row group of %s: %w", w.cur.path, err)
	}
	if w.cur.rgRows > 0 {
		got := float64(w.cur.counter.n-before) / float64(w.cur.rgRows)
		if got > 0 {
			w.bytesPerRow = got
		}
	}
	w.cur.flushedRow += w.cur.rgRows
	w.cur.rgRows = 0
	return nil
}

func (w *rollingWriter) closeFile() error {
	f := w.cur
	w.cur = nil
	before := f.counter.n
	if err := f.pw.close(); err != nil {
		_ = f.counter.Close()
		return fmt.Errorf("close %s: %w", f.path, err)
	}
	if f.rgRows > 0 {
		// The footer is small; attribute the last row group's bytes to its rows.
		if got := float64(f.counter.n-before) / float64(f.rgRows); got > 0 {
			w.bytesPerRow = got
		}
	}
	if err := f.counter.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.path, err)
	}
	md, err := f.pw.metadata()
	if err != nil {
		return fmt.Errorf("footer of %s: %w", f.path, err)
	}
	var partition map[int]any
	if !w.spec.IsUnpartitioned() {
		partition = w.partition
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema:          w.iceSchema,
		Spec:            w.spec,
		Format:          iceberg.ParquetFile,
		Metadata:        md,
		FilePath:        f.path,
		FileSize:        f.counter.n,
		Content:         iceberg.EntryContentData,
		PartitionValues: partition,
		SortOrderID:     w.sortOrderID,
		Properties:      w.props,
		FormatVersion:   w.formatVersion,
	})
	if err != nil {
		return fmt.Errorf("data file of %s: %w", f.path, err)
	}
	if df.Count() != f.rows {
		return fmt.Errorf("%s: footer has %d rows, %d were written", f.path, df.Count(), f.rows)
	}
	w.files = append(w.files, df)
	return nil
}

// finish closes the open file and returns every file written.
func (w *rollingWriter) finish() ([]iceberg.DataFile, error) {
	if w.cur != nil {
		if err := w.closeFile(); err != nil {
			return nil, err
		}
	}
	return w.files, nil
}

// abort closes what is open and removes every file this writer created.
func (w *rollingWriter) abort() error {
	if w.cur != nil {
		_ = w.cur.pw.close()
		_ = w.cur.counter.Close()
		w.cur = nil
	}
	return removeFiles(w.fs, w.created)
}

func removeFiles(fs icebergio.IO, paths []string) error {
	var errs error
	for _, p := range paths {
		if err := fs.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			errs = errors.Join(errs, fmt.Errorf("remove staged %s: %w", p, err))
		}
	}
	return errs
}

// conform gives the scanned batch the writer's schema (the one carrying
// field ids), matching columns by name and casting a column only when its
// Arrow type differs.
func (w *rollingWriter) conform(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if rec.NumCols() != int64(w.arrowSchema.NumFields()) {
		return nil, fmt.Errorf("scanned batch has %d columns, table schema has %d", rec.NumCols(), w.arrowSchema.NumFields())
	}
	return conformTo(w.ctx, w.arrowSchema, rec)
}

// conformTo is rec with the columns of as, found by name, each cast to its
// type in as when it differs (columns of rec that as lacks are dropped).
func conformTo(ctx context.Context, as *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, as.NumFields())
	release := func(n int) {
		for _, done := range cols[:n] {
			done.Release()
		}
	}
	for i := range cols {
		f := as.Field(i)
		src := i
		if i >= int(rec.NumCols()) || rec.Schema().Field(i).Name != f.Name {
			idx := rec.Schema().FieldIndices(f.Name)
			if len(idx) != 1 {
				release(i)
				return nil, fmt.Errorf("scanned batch has no column %s", f.Name)
			}
			src = idx[0]
		}
		c, err := conformArray(ctx, rec.Column(src), f.Type)
		if err != nil {
			release(i)
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		cols[i] = c
	}
	out := array.NewRecordBatch(as, cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// conformArray is a as type dt (a new reference): a itself when the types
// are equal; the same bytes under an extension type whose storage a has (a
// uuid read as fixed_size_binary[16]: arrow-go has no cast kernel to
// extension types, and none is needed), also inside a struct, whose
// children are conformed one by one; else arrow's safe cast.
func conformArray(ctx context.Context, a arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), dt) {
		a.Retain()
		return a, nil
	}
	if ext, ok := dt.(arrow.ExtensionType); ok && arrow.TypeEqual(ext.StorageType(), a.DataType()) {
		return array.NewExtensionArrayWithStorage(ext, a), nil
	}
	st, isStruct := dt.(*arrow.StructType)
	sa, fromStruct := a.(*array.Struct)
	if isStruct && fromStruct && sa.NumField() == st.NumFields() && a.Data().Offset() == 0 {
		children := make([]arrow.Array, st.NumFields())
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		srcType := a.DataType().(*arrow.StructType)
		for i, f := range st.Fields() {
			j, ok := srcType.FieldIdx(f.Name)
			if !ok {
				return nil, fmt.Errorf("struct has no field %s", f.Name)
			}
			c, err := conformArray(ctx, sa.Field(j), f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			children[i] = c
		}
		var nulls *memory.Buffer
		if a.NullN() > 0 {
			nulls = a.Data().Buffers()[0]
		}
		return array.NewStructArrayWithFieldsAndNulls(children, st.Fields(), nulls, a.NullN(), 0)
	}
	cast, err := compute.CastArray(ctx, a, compute.SafeCastOptions(dt))
	if err != nil {
		return nil, fmt.Errorf("cast %s to %s: %w", a.DataType(), dt, err)
	}
	return cast, nil
}
