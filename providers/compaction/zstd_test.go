package compaction

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
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
