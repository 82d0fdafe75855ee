package compaction

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// The low-memory codec writes ordinary zstd that arrow-go's own codec
// decodes, at the same size, for page-sized inputs at several levels.
func TestLowMemoryZstdMatchesArrow(t *testing.T) {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	low := LowMemoryZstd(base)
	var page bytes.Buffer
	for i := 0; page.Len() < 1<<20; i++ {
		fmt.Fprintf(&page, "user-%06d|%d|region-%d\n", i*7919%200000, i, i%4)
	}
	for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9} {
		a := base.EncodeLevel(nil, page.Bytes(), level)
		b := low.EncodeLevel(nil, page.Bytes(), level)
		got := base.Decode(make([]byte, page.Len()), b)
		if !bytes.Equal(got, page.Bytes()) {
			t.Fatalf("level %d: round trip through arrow's decoder differs", level)
		}
		if d := float64(len(b)-len(a)) / float64(len(a)); d > 0.01 || d < -0.01 {
			t.Fatalf("level %d: %d bytes vs arrow's %d", level, len(b), len(a))
		}
	}
	// Reused encoders keep producing the same output.
	first := low.Encode(nil, page.Bytes())
	second := low.Encode(nil, page.Bytes())
	if !bytes.Equal(first, second) {
		t.Fatal("a pooled encoder changed its output")
	}
}

// TestLowMemoryZstdWindows: a page compressed by an encoder of the
// page's window is, byte for byte, what an encoder of the full window
// writes, at every size around the windows' edges and at several levels;
// and however mixed the sizes, a level keeps at most limit free encoders.
func TestLowMemoryZstdWindows(t *testing.T) {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	low := LowMemoryZstd(base).(*lowMemZstd)
	var data bytes.Buffer
	for i := 0; data.Len() < 3<<20; i++ {
		fmt.Fprintf(&data, "user-%06d|%d|region-%d\n", i*7919%200000, i, i%4)
	}
	sizes := []int{1, 1000, 1 << 10, 100 << 10, 128<<10 + 1, 200 << 10, 256<<10 - 1, 256 << 10, 256<<10 + 1,
		700 << 10, 1<<20 - 1, 1 << 20, 1<<20 + 5, 3 << 19, 2<<20 - 1, 2 << 20, 2<<20 + 1, 3 << 20}
	for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9} {
		lvl := zstd.SpeedDefault
		if level != compress.DefaultCompressionLevel {
			lvl = zstd.EncoderLevelFromZstd(level)
		}
		full, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(lvl),
			zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true),
			zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range sizes {
			// A different stretch of the data at each size.
			page := data.Bytes()[n%4096 : n%4096+n]
			want := full.EncodeAll(page, nil)
			got := low.EncodeLevel(nil, page, level)
			if !bytes.Equal(got, want) {
				t.Fatalf("level %d, page of %d bytes (window %d): %d bytes, the full window's %d", level, n, windowFor(n), len(got), len(want))
			}
			if back := base.Decode(make([]byte, n), got); !bytes.Equal(back, page) {
				t.Fatalf("level %d, page of %d bytes: round trip differs", level, n)
			}
		}
	}
	for lvl, n := range low.idle {
		kept := 0
		for k, l := range low.free {
			if k.level == lvl {
				kept += len(l)
			}
		}
		if n != kept || n > low.limit {
			t.Fatalf("level %v: %d free encoders counted, %d kept, limit %d", lvl, n, kept, low.limit)
		}
	}
	if got := []int{windowFor(0), windowFor(256<<10 - 1), windowFor(256 << 10), windowFor(1 << 20), windowFor(5 << 20)}; !slices.Equal(got, []int{256 << 10, 256 << 10, 512 << 10, 2 << 20, 2 << 20}) {
		t.Fatalf("windows %v", got)
	}
}
