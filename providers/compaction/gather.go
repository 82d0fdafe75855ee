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
		b := r.batchOf(int64(g))
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

// batchOf is the batch holding run row g. Batches are mostly of one size
// (a scan's batches are its files'), so the row's share of the run finds
// it at once or a step away; else a binary search of the starts.
func (r *chunkedRun) batchOf(g int64) int {
	nb := len(r.batches)
	b := min(int(g*int64(nb)/max(r.rows(), 1)), nb-1)
	for range 4 {
		switch {
		case r.starts[b] > g:
			b--
		case r.starts[b+1] <= g:
			b++
		default:
			return b
		}
	}
	// The last start at or below g; past empty batches (no rows).
	b, found := slices.BinarySearch(r.starts, g)
	if !found {
		b--
	}
	for r.starts[b+1] == r.starts[b] {
		b++
	}
	return b
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
	if ow == 4 {
		return gatherVarlenOf(srcs, bs, rs, arrow.Int32Traits.CastFromBytes)
	}
	return gatherVarlenOf(srcs, bs, rs, arrow.Int64Traits.CastFromBytes)
}

func gatherVarlenOf[O int32 | int64](srcs []arrow.ArrayData, bs, rs []int32, cast func([]byte) []O) []*memory.Buffer {
	n := len(bs)
	offs := make([][]O, len(srcs))
	data := make([][]byte, len(srcs))
	for i, s := range srcs {
		offs[i] = cast(s.Buffers()[1].Bytes())[s.Offset():]
		if b := s.Buffers()[2]; b != nil {
			data[i] = b.Bytes()
		}
	}
	// One pass finds each value (the reads that miss the cache), the
	// second copies the bytes.
	starts := make([]O, n)
	out := make([]byte, (n+1)*offsetSize[O]())
	ends := cast(out)
	var pos O
	for i := range n {
		o := offs[bs[i]]
		r := rs[i]
		starts[i] = o[r]
		pos += o[r+1] - o[r]
		ends[i+1] = pos
	}
	buf := make([]byte, pos)
	for i := range n {
		copy(buf[ends[i]:ends[i+1]], data[bs[i]][starts[i]:])
	}
	return []*memory.Buffer{memory.NewBufferBytes(out), memory.NewBufferBytes(buf)}
}

// offsetSize is the bytes of an offset type.
func offsetSize[O int32 | int64]() int {
	var o O
	switch any(o).(type) {
	case int32:
		return 4
	}
	return 8
}
