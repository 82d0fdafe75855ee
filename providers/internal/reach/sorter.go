package reach

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
)

// Rec is one record of an external sort: a key to order by and a few
// payload fields (a listed file's path, size and mtime; a reference's
// category and whether it is required).
type Rec struct {
	Key string
	Aux string
	N1  int64
	N2  int64
}

// Sorter sorts records by key within a memory budget: up to limit
// records are kept in memory; beyond that, each full buffer is sorted and
// written to a run file, and Sorted merges the runs (k-way, by key). This is
// what keeps the orphan scan's listing and referenced set bounded whatever
// the number of files (docs/design.md §4, §6): memory is limit records plus one
// buffered reader per run.
type Sorter struct {
	limit int
	// byteLimit also bounds the buffer by the bytes of its strings: a
	// record count alone lets long object-store paths (two strings a
	// record) hold 50-100 MiB per sorter before the first spill.
	byteLimit int
	memBytes  int
	dir       string // created on the first spill
	mem       []Rec
	runs      []string
	seq       int // run file names
	n         int64
}

// spillBytes is the default byte budget of one sorter's in-memory buffer.
const spillBytes = 8 << 20

func NewSorter(limit int) *Sorter {
	return &Sorter{limit: max(limit, 1), byteLimit: spillBytes}
}

func (s *Sorter) Len() int64 { return s.n }

func (s *Sorter) Add(r Rec) error {
	s.mem = append(s.mem, r)
	s.n++
	s.memBytes += len(r.Key) + len(r.Aux) + 48 // strings plus the record itself
	if len(s.mem) >= s.limit || s.memBytes >= s.byteLimit {
		return s.spill()
	}
	return nil
}

func sortRecs(rs []Rec) {
	slices.SortFunc(rs, func(a, b Rec) int { return cmp.Compare(a.Key, b.Key) })
}

func (s *Sorter) spill() error {
	if s.dir == "" {
		d, err := os.MkdirTemp("", "icewright-sort-")
		if err != nil {
			return fmt.Errorf("external sort: %w", err)
		}
		s.dir = d
	}
	sortRecs(s.mem)
	p, err := s.writeRun(slices.Values(s.mem))
	if err != nil {
		return err
	}
	s.runs = append(s.runs, p)
	s.mem = s.mem[:0]
	s.memBytes = 0
	if len(s.runs) >= maxOpenRuns {
		// Merge the runs into one so that a merge never holds more than
		// maxOpenRuns files open.
		merged, err := s.writeRunErr(s.mergeRuns(s.runs, nil))
		if err != nil {
			return err
		}
		for _, r := range s.runs {
			_ = os.Remove(r)
		}
		s.runs = []string{merged}
	}
	return nil
}

// maxOpenRuns bounds the run files a merge opens at once.
const maxOpenRuns = 64

func (s *Sorter) writeRun(recs iter.Seq[Rec]) (string, error) {
	return s.writeRunErr(func(yield func(Rec, error) bool) {
		for r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	})
}

func (s *Sorter) writeRunErr(recs iter.Seq2[Rec, error]) (string, error) {
	s.seq++
	p := filepath.Join(s.dir, fmt.Sprintf("run-%06d", s.seq))
	f, err := os.Create(p)
	if err != nil {
		return "", fmt.Errorf("external sort: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var buf [binary.MaxVarintLen64]byte
	put := func(v int64) {
		n := binary.PutVarint(buf[:], v)
		_, _ = w.Write(buf[:n])
	}
	for r, err := range recs {
		if err != nil {
			_ = f.Close()
			return "", err
		}
		put(int64(len(r.Key)))
		_, _ = w.WriteString(r.Key)
		put(int64(len(r.Aux)))
		_, _ = w.WriteString(r.Aux)
		put(r.N1)
		put(r.N2)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return "", fmt.Errorf("external sort: write run: %w", err)
	}
	return p, nil
}

// Close removes the run files.
func (s *Sorter) Close() error {
	s.mem = nil
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir, s.runs = "", nil
	return err
}

// runReader reads one run back.
type runReader struct {
	f       *os.File
	r       *bufio.Reader
	cur     Rec
	scratch []byte
	lastAux string
}

func (rr *runReader) next() (bool, error) {
	klen, err := binary.ReadVarint(rr.r)
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	str := func(n int64) (string, error) {
		b := make([]byte, n)
		_, err := io.ReadFull(rr.r, b)
		return string(b), err
	}
	var r Rec
	if r.Key, err = str(klen); err != nil {
		return false, err
	}
	alen, err := binary.ReadVarint(rr.r)
	if err != nil {
		return false, err
	}
	// aux repeats (a reference's category, a listed file's "local path"
	// marker): reuse the previous string when the bytes are the same, so
	// reading back millions of records does not allocate one each.
	if cap(rr.scratch) < int(alen) {
		rr.scratch = make([]byte, alen)
	}
	b := rr.scratch[:alen]
	if _, err := io.ReadFull(rr.r, b); err != nil {
		return false, err
	}
	if string(b) != rr.lastAux {
		rr.lastAux = string(b)
	}
	r.Aux = rr.lastAux
	if r.N1, err = binary.ReadVarint(rr.r); err != nil {
		return false, err
	}
	if r.N2, err = binary.ReadVarint(rr.r); err != nil {
		return false, err
	}
	rr.cur = r
	return true, nil
}

// mergeHeap orders the current records of the cursors; the in-memory run
// is a cursor too (index -1 in src).
type mergeCursor struct {
	rr  *runReader // nil for the in-memory run
	mem []Rec
	cur Rec
}

type mergeHeap []*mergeCursor

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i].cur.Key < h[j].cur.Key }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*mergeCursor)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (c *mergeCursor) advance() (bool, error) {
	if c.rr == nil {
		if len(c.mem) == 0 {
			return false, nil
		}
		c.cur, c.mem = c.mem[0], c.mem[1:]
		return true, nil
	}
	ok, err := c.rr.next()
	if ok {
		c.cur = c.rr.cur
	}
	return ok, err
}

// Sorted yields every record in key order (duplicates adjacent, in no
// particular order among themselves). No Add after it. An I/O error is
// yielded once, as the last element.
func (s *Sorter) Sorted() iter.Seq2[Rec, error] {
	sortRecs(s.mem)
	if len(s.runs) == 0 {
		return func(yield func(Rec, error) bool) {
			for _, r := range s.mem {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
	return s.mergeRuns(s.runs, s.mem)
}

// mergeRuns merges sorted run files and a sorted in-memory slice.
func (s *Sorter) mergeRuns(runs []string, mem []Rec) iter.Seq2[Rec, error] {
	return func(yield func(Rec, error) bool) {
		var files []*os.File
		defer func() {
			for _, f := range files {
				_ = f.Close()
			}
		}()
		h := mergeHeap{}
		push := func(c *mergeCursor) error {
			ok, err := c.advance()
			if err != nil {
				return err
			}
			if ok {
				heap.Push(&h, c)
			}
			return nil
		}
		for _, p := range runs {
			f, err := os.Open(p)
			if err != nil {
				yield(Rec{}, fmt.Errorf("external sort: %w", err))
				return
			}
			files = append(files, f)
			if err := push(&mergeCursor{rr: &runReader{f: f, r: bufio.NewReaderSize(f, 1<<16)}}); err != nil {
				yield(Rec{}, fmt.Errorf("external sort: read run: %w", err))
				return
			}
		}
		if err := push(&mergeCursor{mem: mem}); err != nil {
			yield(Rec{}, err)
			return
		}
		for h.Len() > 0 {
			c := h[0]
			if !yield(c.cur, nil) {
				return
			}
			ok, err := c.advance()
			if err != nil {
				yield(Rec{}, fmt.Errorf("external sort: read run: %w", err))
				return
			}
			if ok {
				heap.Fix(&h, 0)
			} else {
				heap.Pop(&h)
			}
		}
	}
}
