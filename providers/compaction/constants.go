package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// A data file may lack columns of the table schema. The spec's column
// projection resolves such a column, in order, from (1) the partition tuple
// when an identity transform of the column is in the file's spec, (2) the
// name mapping when the file has no field ids, (3) the column's
// initial-default, (4) null. iceberg-go v0.7.0's scanner does (2), (3) and
// (4) but not (1): it reads a Hive-style or add_files-imported file, whose
// partition columns live only in the directory names, as NULL, and a
// rewrite would write that NULL into every row, where every other engine
// reads the partition value. fillConstant is rule (1), applied to the
// scanned batches of the files that need it.

// constantCol is one column that a file lacks and whose value comes from
// the file's partition tuple.
type constantCol struct {
	fieldID int
	name    string
	typ     iceberg.Type
	value   any // the partition value (nil: the column reads as null)
}

// constantSubset is the tasks of a group that lack the same columns. A
// group is one partition of one spec, so the value is the same for all of
// them.
type constantSubset struct {
	cols  []constantCol
	tasks []table.FileScanTask
	// plainUUID are the uuid columns (at any depth) these files store as a bare
	// fixed_len_byte_array(16) (no UUID annotation: older Iceberg Java,
	// imports). iceberg-go v0.7.0 cannot read them as uuid (its cast to
	// the uuid extension type has no kernel), so they are read as
	// fixed[16] and the writer rewraps the same 16 bytes as uuid.
	plainUUID []int
}

// identitySources are the top-level columns of tbl's schema that an
// identity field of spec partitions on, with the group's partition values.
func identitySources(tbl *table.Table, spec iceberg.PartitionSpec, partition map[int]any) []constantCol {
	sc := tbl.Schema()
	var out []constantCol
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); !ok {
			continue
		}
		f, ok := sc.FindFieldByID(pf.SourceID())
		if !ok {
			// The source column was dropped: nothing of the table schema
			// to fill.
			continue
		}
		if !slices.ContainsFunc(sc.Fields(), func(top iceberg.NestedField) bool { return top.ID == f.ID }) {
			// A nested source would need the fill inside a struct; until
			// then a file lacking it is refused (see splitByConstants).
			out = append(out, constantCol{fieldID: f.ID, name: "", typ: f.Type, value: partition[pf.FieldID]})
			continue
		}
		out = append(out, constantCol{fieldID: f.ID, name: f.Name, typ: f.Type, value: partition[pf.FieldID]})
	}
	return out
}

// splitByConstants reads the footer of each file of the group (a tail
// read; the rewrite reads the whole file next) and splits the tasks by the
// set of identity-partition columns they lack. When no file lacks one it
// returns the group's tasks as one subset with no columns.
func splitByConstants(ctx context.Context, tbl *table.Table, g Group) ([]constantSubset, error) {
	spec := tbl.Metadata().PartitionSpecByID(g.SpecID)
	if spec == nil || len(g.Tasks) == 0 {
		return []constantSubset{{tasks: g.Tasks}}, nil
	}
	cols := identitySources(tbl, *spec, g.Tasks[0].File.Partition())
	var uuids []int
	walkFields(tbl.Schema().Fields(), func(f iceberg.NestedField) {
		if _, ok := f.Type.(iceberg.UUIDType); ok {
			uuids = append(uuids, f.ID)
		}
	})
	eqDeletes := slices.ContainsFunc(g.Tasks, func(t table.FileScanTask) bool { return len(t.EqualityDeleteFiles) > 0 })
	if len(cols) == 0 && len(uuids) == 0 && !eqDeletes {
		return []constantSubset{{tasks: g.Tasks}}, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table io: %w", err)
	}
	nm := tbl.Metadata().NameMapping()
	byKey := map[string]int{}
	var subsets []constantSubset
	for _, t := range g.Tasks {
		if t.File.FileFormat() != iceberg.ParquetFile {
			return nil, fmt.Errorf("%w: data file %s is %s: icewright rewrites only Parquet files", ErrRefused, t.File.FilePath(), t.File.FileFormat())
		}
		fileSchema, err := fileSchemaOf(fsys, t.File.FilePath(), tbl, nm)
		if err != nil {
			return nil, err
		}
		if why := lacksEqualityColumn(tbl, t, fileSchema); why != "" {
			return nil, fmt.Errorf("%w: %s", ErrRefused, why)
		}
		present := map[int]iceberg.Type{}
		for _, fld := range fileSchema.Fields() {
			present[fld.ID] = fld.Type
		}
		var missing []constantCol
		var plain []int
		var key strings.Builder
		for _, id := range uuids {
			if ff, ok := fileSchema.FindFieldByID(id); ok {
				if fx, isFixed := ff.Type.(iceberg.FixedType); isFixed && fx.Len() == 16 {
					plain = append(plain, id)
					key.WriteString("u" + strconv.Itoa(id) + ",")
				}
			}
		}
		for _, c := range cols {
			if _, ok := present[c.fieldID]; ok {
				continue
			}
			if c.name == "" {
				return nil, fmt.Errorf("%w: data file %s lacks the nested identity-partition column (field id %d): icewright cannot fill it from the partition value yet",
					ErrRefused, t.File.FilePath(), c.fieldID)
			}
			missing = append(missing, c)
			key.WriteString(strconv.Itoa(c.fieldID))
			key.WriteByte(',')
		}
		i, ok := byKey[key.String()]
		if !ok {
			i = len(subsets)
			byKey[key.String()] = i
			subsets = append(subsets, constantSubset{cols: missing, plainUUID: plain})
		}
		subsets[i].tasks = append(subsets[i].tasks, t)
	}
	return subsets, nil
}

// lacksEqualityColumn says which equality delete of task t matches on a
// column that t's file lacks ("" when none). iceberg-go compares the
// delete's values with what the file holds there, not with the value the
// spec projects (the partition value, a default), so it would keep rows
// the delete removes or drop others; icewright refuses to rewrite such a file.
func lacksEqualityColumn(tbl *table.Table, t table.FileScanTask, fileSchema *iceberg.Schema) string {
	for _, d := range t.EqualityDeleteFiles {
		for _, id := range d.EqualityFieldIDs() {
			if _, ok := fileSchema.FindFieldByID(id); ok {
				continue
			}
			name := strconv.Itoa(id)
			if n, ok := tbl.Schema().FindColumnName(id); ok {
				name = n
			}
			return fmt.Sprintf("the equality delete file %s matches on column %s, which data file %s does not hold (its value comes from the partition or a default): "+
				"iceberg-go would apply the delete to the wrong rows, so icewright does not rewrite the file; compact the table once with Spark (rewrite_data_files), which applies such deletes, then icewright can",
				d.FilePath(), name, t.File.FilePath())
		}
	}
	return ""
}

// EqualityDeleteProblem is why a rewrite of tbl's current files would
// apply an equality delete to the wrong rows ("" when none; see
// lacksEqualityColumn). It reads the footer of every data file an equality
// delete applies to, and nothing when the snapshot summary counts no
// equality delete. A data file unreadable says iceberg-go cannot read as
// the table means (a caller's rule: file: URIs whose path changes when
// decoded) is not read: the plan refuses its partition anyway, and opening
// it would fail the table's whole observation or read another file.
func EqualityDeleteProblem(ctx context.Context, tbl *table.Table, unreadable func(path string) bool) (string, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return "", nil
	}
	if snap.Summary != nil {
		if v, ok := snap.Summary.Properties["total-equality-deletes"]; ok && v == "0" {
			return "", nil
		}
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return "", fmt.Errorf("plan files: %w", err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", fmt.Errorf("open table io: %w", err)
	}
	nm := tbl.Metadata().NameMapping()
	for _, t := range tasks {
		if len(t.EqualityDeleteFiles) == 0 || t.File.FileFormat() != iceberg.ParquetFile {
			continue
		}
		if unreadable != nil && unreadable(t.File.FilePath()) {
			continue
		}
		fileSchema, err := fileSchemaOf(fsys, t.File.FilePath(), tbl, nm)
		if err != nil {
			return "", err
		}
		if why := lacksEqualityColumn(tbl, t, fileSchema); why != "" {
			return why, nil
		}
	}
	return "", nil
}

// fileSchemaOf is a data file's schema with field ids as iceberg-go's
// scanner resolves them (footer ids, else the name mapping), read from
// its footer.
func fileSchemaOf(fsys icebergio.IO, path string, tbl *table.Table, nm iceberg.NameMapping) (*iceberg.Schema, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("read footer of %s: %w", path, err)
	}
	defer rdr.Close()
	as, err := pqarrow.FromParquet(rdr.MetaData().Schema, &pqarrow.ArrowReadProperties{}, rdr.MetaData().KeyValueMetadata())
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", path, err)
	}
	fileSchema, err := table.ArrowSchemaToIcebergWithOptions(as, table.ArrowToIcebergOptions{
		NameMapping:     nm,
		TableSchema:     tbl.Schema(),
		TableProperties: tbl.Properties(),
	})
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", path, err)
	}
	return fileSchema, nil
}

// fillConstants replaces, in a scanned batch, each column of cols with
// its constant. It returns a new batch; the caller releases both.
func fillConstants(rec arrow.RecordBatch, cols []constantCol, mem memory.Allocator) (arrow.RecordBatch, error) {
	arrs := make([]arrow.Array, rec.NumCols())
	for i := range arrs {
		arrs[i] = rec.Column(i)
	}
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, c := range cols {
		idx := rec.Schema().FieldIndices(c.name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("scanned batch has no column %s to fill from the partition value", c.name)
		}
		a, err := constantArray(c, rec.Column(idx[0]).DataType(), int(rec.NumRows()), mem)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.name, err)
		}
		made = append(made, a)
		arrs[idx[0]] = a
	}
	return array.NewRecordBatch(rec.Schema(), arrs, rec.NumRows()), nil
}

// constantArray is n copies of c.value as an array of type dt (the type
// the scanner gave the column, so the batch keeps its schema).
func constantArray(c constantCol, dt arrow.DataType, n int, mem memory.Allocator) (arrow.Array, error) {
	if c.value == nil {
		return array.MakeArrayOfNull(mem, dt, n), nil
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	appendOne, err := constantAppender(b, c.value)
	if err != nil {
		return nil, fmt.Errorf("partition value %v (%T) as %s: %w", c.value, c.value, dt, err)
	}
	for range n {
		appendOne()
	}
	return b.NewArray(), nil
}

// constantAppender returns a function appending v to b, converting the Go
// value iceberg-go decoded from the manifest to the builder's type.
func constantAppender(b array.Builder, v any) (func(), error) {
	i64, isInt := asInt64(v)
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		if x, ok := v.(bool); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.Int8Builder:
		if isInt {
			return func() { bb.Append(int8(i64)) }, nil
		}
	case *array.Int16Builder:
		if isInt {
			return func() { bb.Append(int16(i64)) }, nil
		}
	case *array.Int32Builder:
		if isInt {
			return func() { bb.Append(int32(i64)) }, nil
		}
	case *array.Int64Builder:
		if isInt {
			return func() { bb.Append(i64) }, nil
		}
	case *array.Float32Builder:
		switch x := v.(type) {
		case float32:
			return func() { bb.Append(x) }, nil
		case float64:
			return func() { bb.Append(float32(x)) }, nil
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float32:
			return func() { bb.Append(float64(x)) }, nil
		case float64:
			return func() { bb.Append(x) }, nil
		}
	case *array.Date32Builder:
		if isInt {
			return func() { bb.Append(arrow.Date32(i64)) }, nil
		}
	case *array.Time64Builder:
		if isInt {
			return func() { bb.Append(arrow.Time64(i64)) }, nil
		}
	case *array.TimestampBuilder:
		if isInt {
			return func() { bb.Append(arrow.Timestamp(i64)) }, nil
		}
	case *array.StringBuilder:
		if x, ok := v.(string); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.LargeStringBuilder:
		if x, ok := v.(string); ok {
			return func() { bb.Append(x) }, nil
		}
	case *array.BinaryBuilder:
		if x, ok := v.([]byte); ok {
			return func() { bb.Append(x) }, nil
		}
	case *extensions.UUIDBuilder:
		switch x := v.(type) {
		case uuid.UUID:
			return func() { bb.Append(x) }, nil
		case []byte:
			u, err := uuid.FromBytes(x)
			if err != nil {
				return nil, err
			}
			return func() { bb.Append(u) }, nil
		}
	case *array.FixedSizeBinaryBuilder:
		switch x := v.(type) {
		case []byte:
			return func() { bb.Append(x) }, nil
		case uuid.UUID:
			return func() { bb.Append(x[:]) }, nil
		}
	case *array.Decimal128Builder:
		switch x := v.(type) {
		case iceberg.Decimal:
			return decimalAppender(bb, x)
		case iceberg.DecimalLiteral:
			return decimalAppender(bb, iceberg.Decimal(x))
		case decimal128.Num:
			return func() { bb.Append(x) }, nil
		}
	}
	return nil, fmt.Errorf("no conversion")
}

// decimalAppender appends d at the builder type's scale: a partition
// literal carries its own scale, and the unscaled value means nothing
// without it.
func decimalAppender(bb *array.Decimal128Builder, d iceberg.Decimal) (func(), error) {
	dt := bb.Type().(*arrow.Decimal128Type)
	v := d.Val
	if int32(d.Scale) != dt.Scale {
		var err error
		if v, err = v.Rescale(int32(d.Scale), dt.Scale); err != nil {
			return nil, fmt.Errorf("decimal %s at scale %d: %w", d.Val.ToString(int32(d.Scale)), dt.Scale, err)
		}
	}
	if !v.FitsInPrecision(dt.Precision) {
		return nil, fmt.Errorf("decimal %s does not fit %s", v.ToString(dt.Scale), dt)
	}
	return func() { bb.Append(v) }, nil
}

// asInt64 reads the integer-like Go values iceberg-go uses for int, long,
// date, time and timestamp partition values.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case iceberg.Date:
		return int64(x), true
	case iceberg.Time:
		return int64(x), true
	case iceberg.Timestamp:
		return int64(x), true
	case iceberg.TimestampNano:
		return int64(x), true
	}
	return 0, false
}

// readerTable is tbl as the scanner must see it to read sub's files: the
// same metadata, with a current schema in which
//   - every default is typed (typedDefault: iceberg-go cannot read the
//     spec's string forms; exact has the text of large int/long defaults),
//   - the columns in sub.plainUUID are typed fixed[16] (what the files
//     hold), so iceberg-go reads the bytes without its failing cast,
//   - the columns sub fills from the partition tuple are optional: the
//     scanner refuses a required column that a file lacks, and reads it
//     as null before fillConstants puts the value in (the writer's schema
//     is the table's, so the column is written required again).
func readerTable(tbl *table.Table, sub constantSubset, exact map[int]json.Number) (*table.Table, error) {
	cur := tbl.Schema()
	sc, err := typedSchema(cur, exact)
	if err != nil {
		return nil, fmt.Errorf("%w: column defaults: %w", ErrRefused, err)
	}
	changed := sc != cur
	fields := slices.Clone(sc.Fields())
	if len(sub.plainUUID) > 0 {
		fields = retypeFields(fields, sub.plainUUID, iceberg.FixedTypeOf(16))
		changed = true
	}
	for i, f := range fields {
		if f.Required && slices.ContainsFunc(sub.cols, func(c constantCol) bool { return c.fieldID == f.ID }) {
			fields[i].Required = false
			changed = true
		}
	}
	if !changed {
		return tbl, nil
	}
	sc = iceberg.NewSchemaWithIdentifiers(cur.ID, cur.IdentifierFieldIDs, fields...)
	meta := schemaOverride{Metadata: tbl.Metadata(), schema: sc}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, nil), nil
}

// walkFields calls fn on every field of fields and, depth first, of their
// structs.
func walkFields(fields []iceberg.NestedField, fn func(iceberg.NestedField)) {
	for _, f := range fields {
		fn(f)
		if st, ok := f.Type.(*iceberg.StructType); ok {
			walkFields(st.FieldList, fn)
		}
	}
}

// retypeFields is fields with the fields of ids (at any depth, inside
// structs) given type typ.
func retypeFields(fields []iceberg.NestedField, ids []int, typ iceberg.Type) []iceberg.NestedField {
	out := slices.Clone(fields)
	for i, f := range out {
		if slices.Contains(ids, f.ID) {
			out[i].Type = typ
			continue
		}
		if st, ok := f.Type.(*iceberg.StructType); ok {
			out[i].Type = &iceberg.StructType{FieldList: retypeFields(st.FieldList, ids, typ)}
		}
	}
	return out
}

// schemaOverride is table metadata whose current schema is replaced; only
// the reader of readerTable sees it, nothing is committed with it.
type schemaOverride struct {
	table.Metadata
	schema *iceberg.Schema
}

func (m schemaOverride) CurrentSchema() *iceberg.Schema { return m.schema }

func (m schemaOverride) Schemas() []*iceberg.Schema {
	out := slices.Clone(m.Metadata.Schemas())
	for i, s := range out {
		if s.ID == m.schema.ID {
			out[i] = m.schema
		}
	}
	return out
}
