package compaction

import (
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdWindow bounds the encoder's back-reference window. Parquet compresses
// each page on its own (1 MiB data pages, dictionary pages up to 2 MiB), so
// matches never reach further back than 2 MiB anyway.
const zstdWindow = 2 << 20

// zstdMinWindow is the smallest window an encoder is made with.
const zstdMinWindow = 256 << 10

// lowMemZstd is arrow-go's zstd page codec with a page-sized window.
//
// arrow-go's codec encodes every page with a pooled klauspost encoder at its
// default 8 MiB window, whose history buffer is 16 MiB; the pool is a
// sync.Pool, emptied by every garbage collection, so each collection is
// followed by a fresh 16 MiB allocation, which brings the next collection
// sooner. Measured on the 2M-row benchmark: 32 MiB of the 63 MiB live heap
// at the peak were these buffers. With a 2 MiB window and a free list that
// the collector does not empty, the buffers are ~2 MiB each and allocated
// once. The output is ordinary zstd at the table's level; only how far back
// a match may point is bounded, and no page is larger than that.
//
// A page is compressed by an encoder whose window is the smallest power
// of two above the page (windowFor), from 256 KiB: most data pages end at
// the page row limit (a long column's 20,000 rows are 160 KiB), and at the
// default level an encoder with a 256 KiB window holds 2.0 MB where one
// with 2 MiB holds 3.9 MB. The bytes are the same: a match cannot reach
// before the page's start in either, and the frame header gives the
// window the page's own size implies (TestLowMemoryZstdWindows).
type lowMemZstd struct {
	base compress.Codec

	mu    sync.Mutex
	free  map[zstdKey][]*zstd.Encoder
	idle  map[zstd.EncoderLevel]int // free encoders per level, all windows
	limit int                       // free encoders kept per level
}

// zstdKey is what an encoder is made for: a level and a window.
type zstdKey struct {
	level  zstd.EncoderLevel
	window int
}

// LowMemoryZstd wraps arrow-go's registered zstd codec. It is a value, not
// a setting: a main that runs compactions may install it with
// compress.RegisterCodec(compress.Codecs.Zstd, compaction.LowMemoryZstd(base))
// (process-wide state, so only main may).
func LowMemoryZstd(base compress.Codec) compress.Codec {
	return &lowMemZstd{base: base, free: map[zstdKey][]*zstd.Encoder{}, idle: map[zstd.EncoderLevel]int{}, limit: 4}
}

// windowFor is the window of the encoder for a page of n bytes: the
// smallest power of two above n, within [zstdMinWindow, zstdWindow].
func windowFor(n int) int {
	w := zstdMinWindow
	for w <= n && w < zstdWindow {
		w <<= 1
	}
	return w
}

func (c *lowMemZstd) get(k zstdKey) (*zstd.Encoder, error) {
	c.mu.Lock()
	if l := c.free[k]; len(l) > 0 {
		enc := l[len(l)-1]
		c.free[k] = l[:len(l)-1]
		c.idle[k.level]--
		c.mu.Unlock()
		return enc, nil
	}
	c.mu.Unlock()
	return zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(k.level),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true),
		zstd.WithWindowSize(k.window), zstd.WithLowerEncoderMem(true))
}

// put keeps enc for reuse while its level has fewer than limit free
// encoders (of any window), so that pages of mixed sizes keep no more
// idle memory than pages of one size did; else the collector takes it.
func (c *lowMemZstd) put(k zstdKey, enc *zstd.Encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle[k.level] < c.limit {
		c.free[k] = append(c.free[k], enc)
		c.idle[k.level]++
	}
}

func (c *lowMemZstd) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

func (c *lowMemZstd) EncodeLevel(dst, src []byte, level int) []byte {
	lvl := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		lvl = zstd.EncoderLevelFromZstd(level)
	}
	k := zstdKey{level: lvl, window: windowFor(len(src))}
	enc, err := c.get(k)
	if err != nil {
		// Options are constants; fall back rather than fail a page.
		return c.base.EncodeLevel(dst, src, level)
	}
	out := enc.EncodeAll(src, dst[:0])
	c.put(k, enc)
	return out
}

func (c *lowMemZstd) CompressBound(n int64) int64 { return c.base.CompressBound(n) }

func (c *lowMemZstd) Decode(dst, src []byte) []byte { return c.base.Decode(dst, src) }

func (c *lowMemZstd) DecodeWithError(dst, src []byte) ([]byte, error) {
	if ec, ok := c.base.(compress.ErrorCodec); ok {
		return ec.DecodeWithError(dst, src)
	}
	return c.base.Decode(dst, src), nil
}

func (c *lowMemZstd) NewReader(r io.Reader) io.ReadCloser {
	return c.base.(compress.StreamingCodec).NewReader(r)
}

func (c *lowMemZstd) NewWriter(w io.Writer) io.WriteCloser {
	return c.base.(compress.StreamingCodec).NewWriter(w)
}

func (c *lowMemZstd) NewWriterLevel(w io.Writer, level int) (io.WriteCloser, error) {
	return c.base.(compress.StreamingCodec).NewWriterLevel(w, level)
}
