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
type lowMemZstd struct {
	base compress.Codec

	mu    sync.Mutex
	free  map[zstd.EncoderLevel][]*zstd.Encoder
	limit int // encoders kept per level
}

// LowMemoryZstd wraps arrow-go's registered zstd codec. It is a value, not
// a setting: a main that runs compactions may install it with
// compress.RegisterCodec(compress.Codecs.Zstd, compaction.LowMemoryZstd(base))
// (process-wide state, so only main may).
func LowMemoryZstd(base compress.Codec) compress.Codec {
	return &lowMemZstd{base: base, free: map[zstd.EncoderLevel][]*zstd.Encoder{}, limit: 4}
}

func (c *lowMemZstd) get(level zstd.EncoderLevel) (*zstd.Encoder, error) {
	c.mu.Lock()
	if l := c.free[level]; len(l) > 0 {
		enc := l[len(l)-1]
		c.free[level] = l[:len(l)-1]
		c.mu.Unlock()
		return enc, nil
	}
	c.mu.Unlock()
	return zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true),
		zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
}

func (c *lowMemZstd) put(level zstd.EncoderLevel, enc *zstd.Encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.free[level]) < c.limit {
		c.free[level] = append(c.free[level], enc)
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
	enc, err := c.get(lvl)
	if err != nil {
		// Options are constants; fall back rather than fail a page.
		return c.base.EncodeLevel(dst, src, level)
	}
	out := enc.EncodeAll(src, dst[:0])
	c.put(lvl, enc)
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
