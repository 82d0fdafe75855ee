package compaction

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// A row's sort key is a memcomparable byte string: bytes.Compare on two keys
// orders the rows exactly as the Iceberg sort order does, transforms,
// directions and null placement included. One encoding serves the in-memory
// sort, the spilled runs (the key travels with the row) and the k-way merge,
// so the three can never disagree about the order. iceberg-go instead hands
// arrow's per-batch sort the raw source column, which is wrong for bucket
// (hash order, not value order) and only ever orders one batch.

const (
	nullFirstByte = 0x00
	valueByte     = 0x01
	nullLastByte  = 0x02
)

// keyField is one resolved sort field.
type keyField struct {
	col        int // column index in the scanned batch
	name       string
	get        func(arr arrow.Array, i int) any // nil result = null
	transform  func(v any) any                  // nil = identity
	desc       bool
	nullsFirst bool
	// word, when set, reads an identity field of a fixed-width type as
	// the same bytes appendValue writes for it, width bytes of a uint64,
	// without boxing the value (false: null).
	word  func(arr arrow.Array, i int) (uint64, bool)
	width int
}

// keyEncoder turns rows of a batch into sort keys.
type keyEncoder struct {
	fields []keyField
}

// newSortKeyEncoder resolves a table sort order against the scanned Arrow
// schema and the table's Iceberg schema.
func newSortKeyEncoder(order table.SortOrder, sc *iceberg.Schema, as *arrow.Schema) (*keyEncoder, error) {
	enc := &keyEncoder{}
	for _, f := range order.Fields() {
		name, src, err := sortSource(f, sc)
		if err != nil {
			return nil, err
		}
		idx := as.FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("sort column %q is not a top-level column of the scanned rows", name)
		}
		get, tf, err := sortKey(f.Transform, src.Type)
		if err != nil {
			return nil, fmt.Errorf("sort field %s(%s): %w", f.Transform, name, err)
		}
		kf := keyField{
			col:        idx[0],
			name:       name,
			get:        get,
			transform:  tf,
			desc:       f.Direction == table.SortDESC,
			nullsFirst: f.NullOrder == table.NullsFirst,
		}
		if tf == nil {
			kf.word, kf.width = wordReader(src.Type)
		}
		enc.fields = append(enc.fields, kf)
	}
	if len(enc.fields) == 0 {
		return nil, fmt.Errorf("sort order %d has no fields", order.OrderID())
	}
	return enc, nil
}

// sortKey is the one rule of what the engine can order rows by: a column
// of type t under transform tr, read by get and transformed by transform
// (nil: identity). Run (through newSortKeyEncoder and newZOrderKeyer, and
// upfront through CheckSortOrder and CheckZOrderColumns) and the plan
// (through SortTransforms, which providers hands to diff) ask it, so the
// plan refuses exactly what a rewrite could not do.
func sortKey(tr iceberg.Transform, t iceberg.Type) (get func(arrow.Array, int) any, transform func(any) any, err error) {
	get, err = valueGetter(t)
	if err != nil {
		return nil, nil, err
	}
	if !tr.CanTransform(t) {
		// iceberg-go's own rule (SortOrder.CheckCompatibility); bucket's
		// transformer would otherwise hash every value of such a type to
		// null and order nothing.
		return nil, nil, fmt.Errorf("transform %s does not apply to type %s", tr, t)
	}
	transform, err = transformFunc(tr, t)
	if err != nil {
		return nil, nil, err
	}
	return get, transform, nil
}

// sortTransforms are the transforms SortTransforms tries, one of each kind
// transformFunc implements; bucket's and truncate's argument does not
// change which types they apply to.
var sortTransforms = []iceberg.Transform{
	iceberg.IdentityTransform{}, iceberg.BucketTransform{NumBuckets: 1}, iceberg.TruncateTransform{Width: 1},
	iceberg.YearTransform{}, iceberg.MonthTransform{}, iceberg.DayTransform{}, iceberg.HourTransform{},
	iceberg.VoidTransform{},
}

// SortTransforms names the transforms ("identity", "bucket", "truncate",
// "year", "month", "day", "hour", "void": Iceberg's names without their
// argument) by which the engine orders rows by a top-level column of type
// t; none when it cannot order by such a column at all. A zorder column
// needs "identity". Nested fields are never sortable: the engine keys rows
// by top-level columns of the scanned batches.
func SortTransforms(t iceberg.Type) []string {
	var out []string
	for _, tr := range sortTransforms {
		if _, _, err := sortKey(tr, t); err == nil {
			name, _, _ := strings.Cut(tr.String(), "[")
			out = append(out, name)
		}
	}
	return out
}

// sortSource is the top-level column a sort field reads.
func sortSource(f table.SortField, sc *iceberg.Schema) (string, iceberg.NestedField, error) {
	if len(f.SourceIDs) > 1 {
		return "", iceberg.NestedField{}, fmt.Errorf("multi-argument sort transform %s is not supported", f.Transform)
	}
	name, ok := sc.FindColumnName(f.SourceID())
	if !ok {
		return "", iceberg.NestedField{}, fmt.Errorf("sort field source id %d is not in the current schema", f.SourceID())
	}
	src, ok := topLevel(sc, name)
	if !ok {
		return "", iceberg.NestedField{}, fmt.Errorf("sort column %q is a nested field: icewright sorts by top-level columns only", name)
	}
	return name, src, nil
}

// topLevel finds a top-level column by name, case-sensitively as
// iceberg-go's FindFieldByName.
func topLevel(sc *iceberg.Schema, name string) (iceberg.NestedField, bool) {
	for _, f := range sc.Fields() {
		if f.Name == name {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

// CheckSortOrder is nil when Run can sort rows of a table of schema sc by
// order: every field a top-level column whose type and transform sortKey
// accepts. Run checks it before reading anything (ErrRefused), and the
// replace_sort_order executor before installing an order.
func CheckSortOrder(order table.SortOrder, sc *iceberg.Schema) error {
	for _, f := range order.Fields() {
		name, src, err := sortSource(f, sc)
		if err != nil {
			return err
		}
		if _, _, err := sortKey(f.Transform, src.Type); err != nil {
			return fmt.Errorf("sort field %s(%s): %w", f.Transform, name, err)
		}
	}
	return nil
}

// CheckZOrderColumns is CheckSortOrder for zorder columns: top-level
// columns, by name, that the engine can order by.
func CheckZOrderColumns(names []string, sc *iceberg.Schema) error {
	for _, n := range names {
		f, ok := topLevel(sc, n)
		if !ok {
			return fmt.Errorf("zorder column %q is not a top-level column of the table schema", n)
		}
		if _, _, err := sortKey(iceberg.IdentityTransform{}, f.Type); err != nil {
			return fmt.Errorf("zorder column %q: %w", n, err)
		}
	}
	return nil
}

// keys implements rowKeyer: a sort key depends on its row alone.
func (e *keyEncoder) keys(ks *keySet, cols []arrow.Array, n int, _ bool) {
	ks.reset(n)
	for i := range n {
		ks.buf = e.appendKey(ks.buf, cols, i)
		ks.end()
	}
}

func (e *keyEncoder) columns() []int {
	cs := make([]int, len(e.fields))
	for i, f := range e.fields {
		cs[i] = f.col
	}
	return cs
}

// appendKey appends row i's key to dst.
func (e *keyEncoder) appendKey(dst []byte, cols []arrow.Array, i int) []byte {
	for _, f := range e.fields {
		start, null := 0, false
		if f.word != nil {
			u, ok := f.word(cols[f.col], i)
			if null = !ok; !null {
				dst = append(dst, valueByte)
				start = len(dst)
				if f.width == 4 {
					dst = binary.BigEndian.AppendUint32(dst, uint32(u))
				} else {
					dst = binary.BigEndian.AppendUint64(dst, u)
				}
			}
		} else {
			v := f.get(cols[f.col], i)
			if v != nil && f.transform != nil {
				v = f.transform(v)
			}
			if null = v == nil; !null {
				dst = append(dst, valueByte)
				start = len(dst)
				dst = appendValue(dst, v)
			}
		}
		if null {
			if f.nullsFirst {
				dst = append(dst, nullFirstByte)
			} else {
				dst = append(dst, nullLastByte)
			}
			// A null of a word field is as wide as its values (the marker
			// decides every comparison with a value; nulls tie either
			// way), so that keys of such fields keep one width: no
			// offsets, and the radix sort packs the row index in.
			dst = append(dst, zeros[:f.width]...)
			continue
		}
		if f.desc {
			// The value encodings are prefix-free, so inverting every byte
			// reverses their order; the null marker stays outside the
			// inversion because Iceberg's null order is absolute.
			for j := start; j < len(dst); j++ {
				dst[j] = ^dst[j]
			}
		}
	}
	return dst
}

var zeros [8]byte

// wordReader reads a column of type t, as the scanner gives it, as the
// bytes appendValue writes for its values (a uint64 of which the last
// width bytes count), for the fixed-width types whose encoding is an
// integer; nil for the others.
func wordReader(t iceberg.Type) (func(arrow.Array, int) (uint64, bool), int) {
	switch t.(type) {
	case iceberg.Int32Type:
		return wordOf(func(a *array.Int32, i int) uint64 { return uint64(uint32(encInt32(a.Value(i)))) }), 4
	case iceberg.DateType:
		return wordOf(func(a *array.Date32, i int) uint64 { return uint64(uint32(encInt32(int32(a.Value(i))))) }), 4
	case iceberg.Int64Type:
		return wordOf(func(a *array.Int64, i int) uint64 { return encInt64(a.Value(i)) }), 8
	case iceberg.TimeType:
		return wordOf(func(a *array.Time64, i int) uint64 { return encInt64(int64(a.Value(i))) }), 8
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return wordOf(func(a *array.Timestamp, i int) uint64 { return encInt64(int64(a.Value(i))) }), 8
	case iceberg.Float64Type:
		return wordOf(func(a *array.Float64, i int) uint64 { return encFloat64(a.Value(i)) }), 8
	}
	return nil, 0
}

// wordOf reads row i of an array of type A through enc; false for a null
// row. An array of another type panics, as valueGetter's would.
func wordOf[A arrow.Array](enc func(A, int) uint64) func(arrow.Array, int) (uint64, bool) {
	return func(a arrow.Array, i int) (uint64, bool) {
		if a.IsNull(i) {
			return 0, false
		}
		return enc(a.(A), i), true
	}
}

// rowValue reads row i of an array of type A as conv(value), nil for a null
// row: the shape every fixed-width case of valueGetter shares.
func rowValue[V any, A interface {
	arrow.Array
	Value(int) V
}](conv func(V) any) func(arrow.Array, int) any {
	return func(a arrow.Array, i int) any {
		if a.IsNull(i) {
			return nil
		}
		return conv(a.(A).Value(i))
	}
}

func asAny[V any](v V) any { return v }

// valueGetter returns a function reading the Iceberg-typed Go value of row i,
// in the representation iceberg-go's transforms expect.
func valueGetter(t iceberg.Type) (func(arrow.Array, int) any, error) {
	switch t.(type) {
	case iceberg.BooleanType:
		return rowValue[bool, *array.Boolean](asAny), nil
	case iceberg.Int32Type:
		return rowValue[int32, *array.Int32](asAny), nil
	case iceberg.Int64Type:
		return rowValue[int64, *array.Int64](asAny), nil
	case iceberg.Float32Type:
		return rowValue[float32, *array.Float32](asAny), nil
	case iceberg.Float64Type:
		return rowValue[float64, *array.Float64](asAny), nil
	case iceberg.DateType:
		return rowValue[arrow.Date32, *array.Date32](func(v arrow.Date32) any { return iceberg.Date(v) }), nil
	case iceberg.TimeType:
		return rowValue[arrow.Time64, *array.Time64](func(v arrow.Time64) any { return iceberg.Time(v) }), nil
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return rowValue[arrow.Timestamp, *array.Timestamp](func(v arrow.Timestamp) any { return iceberg.Timestamp(v) }), nil
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		// v3 nanoseconds: iceberg-go's transforms take a TimestampNano
		// (its day/hour and bucket of one are the spec's, from nanoseconds).
		return rowValue[arrow.Timestamp, *array.Timestamp](func(v arrow.Timestamp) any { return iceberg.TimestampNano(v) }), nil
	case iceberg.StringType:
		return func(a arrow.Array, i int) any {
			if a.IsNull(i) {
				return nil
			}
			switch s := a.(type) {
			case *array.String:
				return s.Value(i)
			case *array.LargeString:
				return s.Value(i)
			case *array.StringView:
				return s.Value(i)
			}
			return nil
		}, nil
	case iceberg.BinaryType, iceberg.FixedType:
		return func(a arrow.Array, i int) any {
			if a.IsNull(i) {
				return nil
			}
			switch s := a.(type) {
			case *array.Binary:
				return s.Value(i)
			case *array.LargeBinary:
				return s.Value(i)
			case *array.FixedSizeBinary:
				return s.Value(i)
			case *array.BinaryView:
				return s.Value(i)
			}
			return nil
		}, nil
	case iceberg.UUIDType:
		return func(a arrow.Array, i int) any {
			if a.IsNull(i) {
				return nil
			}
			var b []byte
			switch s := a.(type) {
			case array.ExtensionArray:
				if fb, ok := s.Storage().(*array.FixedSizeBinary); ok {
					b = fb.Value(i)
				}
			case *array.FixedSizeBinary:
				b = s.Value(i)
			}
			u, err := uuid.FromBytes(b)
			if err != nil {
				return nil
			}
			return u
		}, nil
	case iceberg.DecimalType:
		dt := t.(iceberg.DecimalType)
		return func(a arrow.Array, i int) any {
			if a.IsNull(i) {
				return nil
			}
			return iceberg.Decimal{Val: a.(*array.Decimal128).Value(i), Scale: dt.Scale()}
		}, nil
	}
	return nil, fmt.Errorf("type %s cannot be sorted by icewright", t)
}

// transformFunc adapts iceberg-go's transform implementations (so bucket
// hashes and truncation widths are exactly the spec's) to one signature.
func transformFunc(tr iceberg.Transform, src iceberg.Type) (func(any) any, error) {
	switch t := tr.(type) {
	case iceberg.IdentityTransform:
		return nil, nil
	case iceberg.VoidTransform:
		return func(any) any { return nil }, nil
	case iceberg.BucketTransform:
		fn := t.Transformer(src)
		return func(v any) any {
			o := fn(v)
			if !o.Valid {
				return nil
			}
			return o.Val
		}, nil
	case iceberg.TruncateTransform:
		fn, err := t.Transformer(src)
		if err != nil {
			return nil, err
		}
		return fn, nil
	case iceberg.TimeTransform:
		fn, err := t.Transformer(src)
		if err != nil {
			return nil, err
		}
		return func(v any) any {
			o := fn(v)
			if !o.Valid {
				return nil
			}
			return o.Val
		}, nil
	}
	return nil, fmt.Errorf("transform %s is not supported for sorting", tr)
}

// appendValue appends an order-preserving, prefix-free encoding of v.
func appendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case bool:
		if x {
			return append(dst, 1)
		}
		return append(dst, 0)
	case int32:
		return binary.BigEndian.AppendUint32(dst, uint32(encInt32(x)))
	case iceberg.Date:
		return binary.BigEndian.AppendUint32(dst, uint32(encInt32(int32(x))))
	case int64:
		return binary.BigEndian.AppendUint64(dst, encInt64(x))
	case iceberg.Time:
		return binary.BigEndian.AppendUint64(dst, encInt64(int64(x)))
	case iceberg.Timestamp:
		return binary.BigEndian.AppendUint64(dst, encInt64(int64(x)))
	case iceberg.TimestampNano:
		return binary.BigEndian.AppendUint64(dst, encInt64(int64(x)))
	case float32:
		b := math.Float32bits(x)
		if b&(1<<31) != 0 {
			b = ^b
		} else {
			b |= 1 << 31
		}
		return binary.BigEndian.AppendUint32(dst, b)
	case float64:
		return binary.BigEndian.AppendUint64(dst, encFloat64(x))
	case string:
		return appendEscaped(dst, []byte(x))
	case []byte:
		return appendEscaped(dst, x)
	case uuid.UUID:
		return append(dst, x[:]...)
	case iceberg.Decimal:
		// Two's complement 128-bit, sign flipped: orders unscaled values,
		// which is the value order within one decimal type.
		dst = binary.BigEndian.AppendUint64(dst, uint64(x.Val.HighBits())^(1<<63))
		return binary.BigEndian.AppendUint64(dst, x.Val.LowBits())
	}
	panic(fmt.Sprintf("compaction: no key encoding for %T", v))
}

// appendEscaped encodes bytes so that the encoding is prefix-free and keeps
// lexicographic order: 0x00 becomes 0x00 0xFF and the value ends with
// 0x00 0x01.
func appendEscaped(dst, b []byte) []byte {
	for _, c := range b {
		if c == 0 {
			dst = append(dst, 0, 0xFF)
			continue
		}
		dst = append(dst, c)
	}
	return append(dst, 0, 1)
}
