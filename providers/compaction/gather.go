package compaction

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// chunkedRun is an in-memory sort run kept as the batches it was read in,
// gathered from directly in sorted order: no concatenated copy of the run
// exists beside it (the run's peak was the batches plus their
// concatenation, column by column), and a sorted chunk is built by copying
// each row's values once instead of arrow's Take on the concatenated run.
// Only flat columns of the layouts gatherColumn knows qualify
// (chunkedGatherable); other schemas concatenate and Take as before.
type chunkedRun struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	starts  []int64 // starts[b] is the run row of batch b's first row; one more entry: the total

	// scratch, reused chunk after chunk
	bs, rs []int32
}

func newChunkedRun(schema *arrow.Schema, batches []arrow.RecordBatch) *chunkedRun {
	r := &chunkedRun{schema: schema, batches: batches, starts: make([]int64, len(batches)+1)}
	for i, b := range batches {
		r.starts[i+1] = r.starts[i] + b.NumRows()
	}
	return r
}

func (r *chunkedRun) rows() int64 { return r.starts[len(r.batches)] }

// column is column c over the whole run, concatenated (a new reference):
// what a keyer reads.
func (r *chunkedRun) column(c int, mem memory.Allocator) (arrow.Array, error) {
	parts := make([]arrow.Array, len(r.batches))
	for i, b := range r.batches {
		parts[i] = b.Column(c)
	}
	return array.Concatenate(parts, mem)
}

// gather builds the batch of run rows perm, in that order.
func (r *chunkedRun) gather(perm []int32) (arrow.RecordBatch, error) {
	r.bs, r.rs = r.bs[:0], r.rs[:0]
	for _, g := range perm {
		// The batch holding run row g: the last start at or below it.
		b, found := slices.BinarySearch(r.starts, int64(g))
		if !found {
			b--
		}
		for r.starts[b+1] == r.starts[b] { // empty batches hold no row
			b++
		}
		r.bs = append(r.bs, int32(b))
		r.rs = append(r.rs, int32(int64(g)-r.starts[b]))
	}
	cols := make([]arrow.Array, r.schema.NumFields())
	srcs := make([]arrow.ArrayData, len(r.batches))
	for c := range cols {
		for i, b := range r.batches {
			srcs[i] = b.Column(c).Data()
		}
		d, err := gatherColumn(r.schema.Field(c).Type, srcs, r.bs, r.rs)
		if err != nil {
			for _, done := range cols[:c] {
				done.Release()
			}
			return nil, fmt.Errorf("gather column %s: %w", r.schema.Field(c).Name, err)
		}
		cols[c] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecordBatch(r.schema, cols, int64(len(perm)))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func (r *chunkedRun) release() {
	for _, b := range r.batches {
		b.Release()
	}
	r.batches = nil
}

// gatherLayout is how gatherColumn copies a type's values: bytes per
// value for fixed-width types (0: bits, for booleans), or offsets of 4
// or 8 bytes for variable-length binaries.
type gatherLayout struct {
	width   int // fixed: bytes per value; 0 with !varlen: one bit per value
	varlen  bool
	offsets int // varlen: 4 or 8
}

func layoutOf(dt arrow.DataType) (gatherLayout, bool) {
	if ext, ok := dt.(arrow.ExtensionType); ok {
		dt = ext.StorageType()
	}
	switch dt.ID() {
	case arrow.BOOL:
		return gatherLayout{}, true
	case arrow.STRING, arrow.BINARY:
		return gatherLayout{varlen: true, offsets: 4}, true
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return gatherLayout{varlen: true, offsets: 8}, true
	}
	fw, ok := dt.(arrow.FixedWidthDataType)
	if !ok || dt.ID() == arrow.DICTIONARY || dt.ID() == arrow.NULL {
		return gatherLayout{}, false
	}
	if bits := fw.BitWidth(); bits >= 8 && bits%8 == 0 && len(dt.Layout().Buffers) == 2 {
		return gatherLayout{width: bits / 8}, true
	}
	return gatherLayout{}, false
}

// chunkedGatherable reports whether every column of s has a layout
// gatherColumn copies.
func chunkedGatherable(s *arrow.Schema) bool {
	for _, f := range s.Fields() {
		if _, ok := layoutOf(f.Type); !ok {
			return false
		}
	}
	return true
}

// gatherColumn copies value rs[i] of source srcs[bs[i]] to row i of a new
// array of type dt (every source has type dt and a layout layoutOf knows).
func gatherColumn(dt arrow.DataType, srcs []arrow.ArrayData, bs, rs []int32) (arrow.ArrayData, error) {
	lay, ok := layoutOf(dt)
	if !ok {
		return nil, fmt.Errorf("type %s cannot be gathered", dt)
	}
	n := len(bs)
	var validity *memory.Buffer
	nulls := 0
	// A slice's null count may be unknown (-1): a validity buffer is what
	// says a source may hold nulls.
	valid := make([][]byte, len(srcs)) // nil: every value valid
	anyNull := false
	for i, s := range srcs {
		if s.NullN() != 0 && s.Buffers()[0] != nil {
			valid[i], anyNull = s.Buffers()[0].Bytes(), true
		}
	}
	if anyNull {
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			v := valid[bs[i]]
			if v == nil || bitutil.BitIsSet(v, srcs[bs[i]].Offset()+int(rs[i])) {
				bitutil.SetBit(bits, i)
			} else {
				nulls++
			}
		}
		validity = memory.NewBufferBytes(bits)
	}
	var bufs []*memory.Buffer
	switch {
	case lay.varlen:
		bufs = gatherVarlen(lay.offsets, srcs, bs, rs)
	case lay.width == 0:
		out := make([]byte, bitutil.BytesForBits(int64(n)))
		for i := range n {
			s := srcs[bs[i]]
			if bitutil.BitIsSet(s.Buffers()[1].Bytes(), s.Offset()+int(rs[i])) {
				bitutil.SetBit(out, i)
			}
		}
		bufs = []*memory.Buffer{memory.NewBufferBytes(out)}
	default:
		bufs = []*memory.Buffer{memory.NewBufferBytes(gatherFixed(lay.width, srcs, bs, rs))}
	}
	return array.NewData(dt, n, append([]*memory.Buffer{validity}, bufs...), nil, nulls, 0), nil
}

// gatherFixed copies fixed-width values of w bytes each.
func gatherFixed(w int, srcs []arrow.ArrayData, bs, rs []int32) []byte {
	n := len(bs)
	out := make([]byte, n*w)
	vals := make([][]byte, len(srcs))
	for i, s := range srcs {
		if b := s.Buffers()[1]; b != nil {
			vals[i] = b.Bytes()[s.Offset()*w:]
		}
	}
	switch w {
	case 4:
		gatherWords(arrow.Uint32Traits.CastFromBytes(out), vals, arrow.Uint32Traits.CastFromBytes, bs, rs)
	case 8:
		gatherWords(arrow.Uint64Traits.CastFromBytes(out), vals, arrow.Uint64Traits.CastFromBytes, bs, rs)
	default:
		for i := range n {
			r := int(rs[i]) * w
			copy(out[i*w:i*w+w], vals[bs[i]][r:r+w])
		}
	}
	return out
}

// gatherWords copies values that are one machine word each, as words.
func gatherWords[T uint32 | uint64](dst []T, vals [][]byte, cast func([]byte) []T, bs, rs []int32) {
	typed := make([][]T, len(vals))
	for i, v := range vals {
		typed[i] = cast(v)
	}
	for i := range dst {
		dst[i] = typed[bs[i]][rs[i]]
	}
}

// gatherVarlen copies binary values with offsets of ow (4 or 8) bytes:
// the offsets buffer and the data buffer.
func gatherVarlen(ow int, srcs []arrow.ArrayData, bs, rs []int32) []*memory.Buffer {
	n := len(bs)
	// offset of value r of source s, and of the value after it
	at := func(s arrow.ArrayData, r int) (int64, int64) {
		b := s.Buffers()[1].Bytes()
		r += s.Offset()
		if ow == 4 {
			o := arrow.Int32Traits.CastFromBytes(b)
			return int64(o[r]), int64(o[r+1])
		}
		o := arrow.Int64Traits.CastFromBytes(b)
		return o[r], o[r+1]
	}
	offs := make([]byte, (n+1)*ow)
	var total int64
	for i := range n {
		lo, hi := at(srcs[bs[i]], int(rs[i]))
		total += hi - lo
	}
	data := make([]byte, total)
	var pos int64
	o32, o64 := []int32(nil), []int64(nil)
	if ow == 4 {
		o32 = arrow.Int32Traits.CastFromBytes(offs)
	} else {
		o64 = arrow.Int64Traits.CastFromBytes(offs)
	}
	for i := range n {
		s := srcs[bs[i]]
		lo, hi := at(s, int(rs[i]))
		if hi > lo {
			copy(data[pos:], s.Buffers()[2].Bytes()[lo:hi])
		}
		pos += hi - lo
		if o32 != nil {
			o32[i+1] = int32(pos)
		} else {
			o64[i+1] = pos
		}
	}
	return []*memory.Buffer{memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}
}
