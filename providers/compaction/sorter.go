package compaction

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"
)

// rowKeyer computes a memcomparable key per row.
type rowKeyer interface {
	// keys resets ks to the keys of rows [0, n) of cols. whole says that
	// these rows are all the rows whose keys will ever be compared (the
	// group fits one run), so keys may depend on every row (z-order's
	// exact ranks); otherwise they must be comparable with the keys of
	// later runs.
	keys(ks *keySet, cols []arrow.Array, n int, whole bool)
	// columns are the indices of the columns keys reads (the others may
	// be nil).
	columns() []int
}

const keyColumn = "__icewright_sort_key"

// externalSorter orders a stream of batches by key within a memory budget.
// Rows accumulate until the run budget is reached; the run is sorted and,
// unless it turns out to be the only one, spilled to a temporary Arrow IPC
// file with its keys as an extra column. At the end the runs are merged
// k ways. Peak memory is about one run plus one batch per open run, not the
// group's size.
type externalSorter struct {
	ctx       context.Context
	keyer     rowKeyer
	schema    *arrow.Schema
	runBudget int64
	outRows   int
	tempDir   string
	mem       memory.Allocator
	fanIn     int

	pending      []arrow.RecordBatch
	pendingBytes int64
	runs         []string
	spilledRuns  int
	spilledBytes int64
	rows         int64
}

func newExternalSorter(ctx context.Context, keyer rowKeyer, schema *arrow.Schema, runBudget int64, tempDir string) *externalSorter {
	return &externalSorter{
		ctx:       ctx,
		keyer:     keyer,
		schema:    schema,
		runBudget: max(runBudget, 1<<20),
		outRows:   8192,
		tempDir:   tempDir,
		mem:       memory.DefaultAllocator,
		fanIn:     64,
	}
}

// add takes a batch into the sorter (the caller keeps its own reference).
func (s *externalSorter) add(rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		return nil
	}
	rec, err := compactBatch(rec, s.mem)
	if err != nil {
		return err
	}
	s.pending = append(s.pending, rec)
	s.pendingBytes += util.TotalRecordSize(rec)
	s.rows += rec.NumRows()
	if s.pendingBytes >= s.runBudget {
		return s.spill()
	}
	return nil
}

// sortPending concatenates the pending batches and returns them with their
// keys and the sorted permutation. The pending batches are released. whole:
// see rowKeyer.
func (s *externalSorter) sortPending(whole bool) (arrow.RecordBatch, *keySet, []int32, error) {
	defer func() {
		for _, r := range s.pending {
			r.Release()
		}
		s.pending = nil
		s.pendingBytes = 0
	}()
	var big arrow.RecordBatch
	if len(s.pending) == 1 {
		big = s.pending[0]
		big.Retain()
	} else {
		cols := make([]arrow.Array, s.schema.NumFields())
		var n int64
		// The batches' columns, held apart from their batches so that each
		// column's parts are let go as soon as it is concatenated: the run
		// peaks at its size plus one column, not twice its size.
		parts := make([][]arrow.Array, len(cols))
		for c := range cols {
			parts[c] = make([]arrow.Array, len(s.pending))
			for i, r := range s.pending {
				a := r.Column(c)
				a.Retain()
				parts[c][i] = a
			}
		}
		for _, r := range s.pending {
			n += r.NumRows()
			r.Release()
		}
		s.pending = nil
		releaseParts := func(from, to int) {
			for _, ps := range parts[from:to] {
				for _, a := range ps {
					a.Release()
				}
			}
		}
		for c := range cols {
			cat, err := array.Concatenate(parts[c], s.mem)
			releaseParts(c, c+1)
			parts[c] = nil
			if err != nil {
				releaseParts(c+1, len(parts))
				for _, done := range cols[:c] {
					done.Release()
				}
				return nil, nil, nil, fmt.Errorf("concatenate run column %s: %w", s.schema.Field(c).Name, err)
			}
			cols[c] = cat
		}
		big = array.NewRecordBatch(s.schema, cols, n)
		for _, c := range cols {
			c.Release()
		}
	}
	ks := &keySet{}
	s.keyer.keys(ks, big.Columns(), int(big.NumRows()), whole)
	return big, ks, ks.sortedPerm(false), nil
}

// takeChunk returns rows perm[lo:hi] of rec (and of keys when asked).
func (s *externalSorter) takeChunk(rec arrow.RecordBatch, keys *keySet, perm []int32, withKeys bool) (arrow.RecordBatch, error) {
	ib := array.NewInt32Builder(s.mem)
	ib.AppendValues(perm, nil)
	idx := ib.NewInt32Array()
	ib.Release()
	defer idx.Release()
	out, err := compute.Take(s.ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(rec), compute.NewDatumWithoutOwning(idx))
	if err != nil {
		return nil, fmt.Errorf("take sorted rows: %w", err)
	}
	taken := out.(*compute.RecordDatum).Value
	if !withKeys {
		return taken, nil
	}
	kb := array.NewBinaryBuilder(s.mem, arrow.BinaryTypes.Binary)
	for _, i := range perm {
		kb.Append(keys.key(int(i)))
	}
	k := kb.NewArray()
	kb.Release()
	cols := append(slices.Clone(taken.Columns()), k)
	fields := append(slices.Clone(s.schema.Fields()), arrow.Field{Name: keyColumn, Type: arrow.BinaryTypes.Binary})
	withK := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, taken.NumRows())
	taken.Release()
	k.Release()
	return withK, nil
}

func (s *externalSorter) spill() error {
	big, keys, perm, err := s.sortPending(false)
	if err != nil {
		return err
	}
	defer big.Release()
	f, err := os.CreateTemp(s.tempDir, "icewright-run-*.arrow")
	if err != nil {
		return fmt.Errorf("create spill file: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	fields := append(slices.Clone(s.schema.Fields()), arrow.Field{Name: keyColumn, Type: arrow.BinaryTypes.Binary})
	w := ipc.NewWriter(f, ipc.WithSchema(arrow.NewSchema(fields, nil)), ipc.WithAllocator(s.mem), ipc.WithLZ4())
	chunk := s.spillChunkRows(big)
	for lo := 0; lo < len(perm); lo += chunk {
		hi := min(lo+chunk, len(perm))
		rec, err := s.takeChunk(big, keys, perm[lo:hi], true)
		if err != nil {
			_ = w.Close()
			_ = f.Close()
			return err
		}
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			_ = w.Close()
			_ = f.Close()
			return fmt.Errorf("write spill run %s: %w", f.Name(), err)
		}
	}
	if err := w.Close(); err != nil {
		_ = f.Close()
		return fmt.Errorf("close spill run %s: %w", f.Name(), err)
	}
	if st, err := f.Stat(); err == nil {
		s.spilledBytes += st.Size()
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close spill run %s: %w", f.Name(), err)
	}
	s.spilledRuns++
	return nil
}

// spillChunkRows sizes the IPC batches of a run so that one batch of each of
// fanIn open runs fits in half the run budget during the merge.
func (s *externalSorter) spillChunkRows(rec arrow.RecordBatch) int {
	rowBytes := max(util.TotalRecordSize(rec)/max(rec.NumRows(), 1), 1)
	rows := s.runBudget / 2 / int64(s.fanIn) / rowBytes
	return int(min(max(rows, 256), 65536))
}

// finish emits every row in key order and removes the spill files.
func (s *externalSorter) finish(emit func(arrow.RecordBatch) error) error {
	defer s.cleanup()
	if len(s.runs) == 0 {
		if len(s.pending) == 0 {
			return nil
		}
		// Everything fitted in one run: no spill, sort and emit directly.
		if chunkedGatherable(s.schema) {
			return s.emitChunked(emit)
		}
		big, _, perm, err := s.sortPending(true)
		if err != nil {
			return err
		}
		defer big.Release()
		return s.emitInChunks(perm, func(rows []int32) (arrow.RecordBatch, error) {
			return s.takeChunk(big, nil, rows, false)
		}, emit)
	}
	if len(s.pending) > 0 {
		if err := s.spill(); err != nil {
			return err
		}
	}
	// Reduce the fan-in first so the final merge holds at most fanIn batches.
	for len(s.runs) > s.fanIn {
		var next []string
		for lo := 0; lo < len(s.runs); lo += s.fanIn {
			hi := min(lo+s.fanIn, len(s.runs))
			if hi-lo == 1 {
				next = append(next, s.runs[lo])
				continue
			}
			path, err := s.mergeToFile(s.runs[lo:hi])
			if err != nil {
				s.runs = append(next, s.runs[lo:]...)
				return err
			}
			for _, p := range s.runs[lo:hi] {
				_ = os.Remove(p)
			}
			next = append(next, path)
		}
		s.runs = next
	}
	return s.merge(s.runs, func(rec arrow.RecordBatch) error {
		// Drop the key column before handing rows to the writer.
		cols := rec.Columns()[:s.schema.NumFields()]
		out := array.NewRecordBatch(s.schema, cols, rec.NumRows())
		defer out.Release()
		return emit(out)
	})
}

// emitChunked sorts the pending batches, the group's only run, and emits
// them in key order, gathered from the batches chunk by chunk (chunkedRun):
// the keyer reads only the key columns, concatenated.
func (s *externalSorter) emitChunked(emit func(arrow.RecordBatch) error) error {
	run := newChunkedRun(s.schema, s.pending)
	s.pending, s.pendingBytes = nil, 0
	defer run.release()
	n := int(run.rows())
	cols := make([]arrow.Array, s.schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for _, c := range s.keyer.columns() {
		if cols[c] != nil {
			continue
		}
		a, err := run.column(c, s.mem)
		if err != nil {
			return fmt.Errorf("concatenate key column %s: %w", s.schema.Field(c).Name, err)
		}
		cols[c] = a
	}
	ks := &keySet{}
	s.keyer.keys(ks, cols, n, true)
	for i, c := range cols {
		if c != nil {
			c.Release()
			cols[i] = nil
		}
	}
	perm := ks.sortedPerm(true)
	ks = nil // the keys are garbage once the rows are in order
	return s.emitInChunks(perm, run.gather, emit)
}

// emitInChunks emits the rows of perm, in its order, outRows at a time,
// each chunk built by take.
func (s *externalSorter) emitInChunks(perm []int32, take func([]int32) (arrow.RecordBatch, error), emit func(arrow.RecordBatch) error) error {
	for lo := 0; lo < len(perm); lo += s.outRows {
		rec, err := take(perm[lo:min(lo+s.outRows, len(perm))])
		if err != nil {
			return err
		}
		err = emit(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// compactBatch is rec (a new reference) with the columns that the reader
// left in much larger allocations than their values need copied into
// buffers of their length, so that a run holds its rows, not the reader's
// slack: pqarrow reserves values for a whole read batch and string offsets
// and data ahead (measured on the 10M-row benchmark: the run held 622 MiB
// of allocations for 129 MiB of values). Other columns are kept as they
// are.
func compactBatch(rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, rec.NumCols())
	copied := false
	for i, c := range rec.Columns() {
		var length, capacity int
		for _, b := range c.Data().Buffers() {
			if b != nil {
				length += b.Len()
				// The allocation, not Cap: a buffer the reader shrank
				// to its values is a reslice of what it reserved.
				capacity += cap(b.Buf())
			}
		}
		if capacity <= length+length/8+4096 {
			c.Retain()
			cols[i] = c
			continue
		}
		a, err := array.Concatenate([]arrow.Array{c}, mem)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, fmt.Errorf("copy column %s: %w", rec.ColumnName(i), err)
		}
		cols[i], copied = a, true
	}
	if !copied {
		for _, c := range cols {
			c.Release()
		}
		rec.Retain()
		return rec, nil
	}
	out := array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func (s *externalSorter) mergeToFile(runs []string) (string, error) {
	f, err := os.CreateTemp(s.tempDir, "icewright-run-*.arrow")
	if err != nil {
		return "", fmt.Errorf("create merge file: %w", err)
	}
	fields := append(slices.Clone(s.schema.Fields()), arrow.Field{Name: keyColumn, Type: arrow.BinaryTypes.Binary})
	w := ipc.NewWriter(f, ipc.WithSchema(arrow.NewSchema(fields, nil)), ipc.WithAllocator(s.mem), ipc.WithLZ4())
	err = s.merge(runs, func(rec arrow.RecordBatch) error { return w.Write(rec) })
	err = errors.Join(err, w.Close(), f.Close())
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("merge %d runs: %w", len(runs), err)
	}
	return f.Name(), nil
}

type runCursor struct {
	f    *os.File
	rd   *ipc.Reader
	rec  arrow.RecordBatch
	keys *array.Binary
	row  int
	src  int // index in the current chunk's source list
}

func (c *runCursor) key() []byte { return c.keys.Value(c.row) }

// advanceBatch loads the next batch; false at the end of the run.
func (c *runCursor) advanceBatch() (bool, error) {
	for c.rd.Next() {
		rec := c.rd.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		rec.Retain()
		c.rec = rec
		c.keys = rec.Column(int(rec.NumCols()) - 1).(*array.Binary)
		c.row = 0
		c.src = -1
		return true, nil
	}
	if err := c.rd.Err(); err != nil {
		return false, fmt.Errorf("read spill run %s: %w", c.f.Name(), err)
	}
	return false, nil
}

type cursorHeap []*runCursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	return bytes.Compare(h[i].key(), h[j].key()) < 0
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*runCursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// merge k-way merges sorted runs, emitting batches that still carry the key
// column. A chunk's rows come from the batches current when they were
// picked; those batches stay referenced until the chunk is built.
func (s *externalSorter) merge(runs []string, emit func(arrow.RecordBatch) error) (err error) {
	var cursors []*runCursor
	defer func() {
		for _, c := range cursors {
			if c.rec != nil {
				c.rec.Release()
			}
			c.rd.Release()
			_ = c.f.Close()
		}
	}()
	h := &cursorHeap{}
	for _, p := range runs {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("open spill run: %w", err)
		}
		rd, err := ipc.NewReader(f, ipc.WithAllocator(s.mem))
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("open spill run %s: %w", p, err)
		}
		c := &runCursor{f: f, rd: rd}
		cursors = append(cursors, c)
		ok, err := c.advanceBatch()
		if err != nil {
			return err
		}
		if ok {
			heap.Push(h, c)
		}
	}
	var (
		sources []arrow.RecordBatch
		picks   []pick
	)
	flush := func() error {
		if len(picks) == 0 {
			return nil
		}
		rec, err := gather(s.ctx, s.mem, sources, picks)
		for _, src := range sources {
			src.Release()
		}
		sources = sources[:0]
		picks = picks[:0]
		for _, c := range cursors {
			c.src = -1
		}
		if err != nil {
			return err
		}
		defer rec.Release()
		return emit(rec)
	}
	for h.Len() > 0 {
		c := (*h)[0]
		if c.src < 0 {
			c.rec.Retain()
			sources = append(sources, c.rec)
			c.src = len(sources) - 1
		}
		picks = append(picks, pick{src: c.src, row: c.row})
		c.row++
		if c.row >= int(c.rec.NumRows()) {
			c.rec.Release()
			c.rec = nil
			ok, err := c.advanceBatch()
			if err != nil {
				return err
			}
			if ok {
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
			}
		} else {
			heap.Fix(h, 0)
		}
		if len(picks) >= s.outRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func (s *externalSorter) cleanup() {
	for _, r := range s.pending {
		r.Release()
	}
	s.pending = nil
	for _, p := range s.runs {
		_ = os.Remove(p)
	}
	s.runs = nil
}

type pick struct {
	src int
	row int
}

// gather builds one batch from rows picked across several source batches,
// in pick order: each source's rows are taken in one Take, the pieces are
// concatenated, and a final Take interleaves them.
func gather(ctx context.Context, mem memory.Allocator, sources []arrow.RecordBatch, picks []pick) (arrow.RecordBatch, error) {
	schema := sources[0].Schema()
	if len(sources) == 1 {
		idx := make([]int32, len(picks))
		for i, p := range picks {
			idx[i] = int32(p.row)
		}
		return takeRows(ctx, mem, sources[0], idx)
	}
	perSrc := make([][]int32, len(sources))
	for _, p := range picks {
		perSrc[p.src] = append(perSrc[p.src], int32(p.row))
	}
	offsets := make([]int32, len(sources))
	pieces := make([]arrow.RecordBatch, 0, len(sources))
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	var off int32
	for i, rows := range perSrc {
		offsets[i] = off
		off += int32(len(rows))
		t, err := takeRows(ctx, mem, sources[i], rows)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, t)
	}
	cols := make([]arrow.Array, schema.NumFields())
	for c := range cols {
		parts := make([]arrow.Array, len(pieces))
		for i, p := range pieces {
			parts[i] = p.Column(c)
		}
		cat, err := array.Concatenate(parts, mem)
		if err != nil {
			for _, done := range cols[:c] {
				done.Release()
			}
			return nil, fmt.Errorf("concatenate merge chunk: %w", err)
		}
		cols[c] = cat
	}
	combined := array.NewRecordBatch(schema, cols, int64(off))
	for _, c := range cols {
		c.Release()
	}
	defer combined.Release()
	next := slices.Clone(offsets)
	idx := make([]int32, len(picks))
	for i, p := range picks {
		idx[i] = next[p.src]
		next[p.src]++
	}
	return takeRows(ctx, mem, combined, idx)
}

func takeRows(ctx context.Context, mem memory.Allocator, rec arrow.RecordBatch, rows []int32) (arrow.RecordBatch, error) {
	ib := array.NewInt32Builder(mem)
	ib.AppendValues(rows, nil)
	idx := ib.NewInt32Array()
	ib.Release()
	defer idx.Release()
	out, err := compute.Take(ctx, *compute.DefaultTakeOptions(), compute.NewDatumWithoutOwning(rec), compute.NewDatumWithoutOwning(idx))
	if err != nil {
		return nil, fmt.Errorf("take rows: %w", err)
	}
	return out.(*compute.RecordDatum).Value, nil
}
