package diff

import (
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

func TestFormatting(t *testing.T) {
	durations := map[time.Duration]string{
		0: "0s", 2 * day: "2d", 36 * time.Hour: "36h", 90 * time.Minute: "90m", 45 * time.Second: "45s", 1500 * time.Millisecond: "1500ms",
	}
	for d, want := range durations {
		if got := config.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	sizes := map[int64]string{0: "0", 512 << 20: "512MiB", 1 << 30: "1GiB", 64 << 10: "64KiB", 1000: "1KB", 128e6: "128MB", 1001: "1001", 3 << 40: "3TiB"}
	for n, want := range sizes {
		if got := config.FormatSizeExact(n); got != want {
			t.Errorf("FormatSizeExact(%d) = %q, want %q", n, got, want)
		}
	}
	ages := map[time.Duration]string{41*day + time.Hour: "41d", 5 * time.Hour: "5h", 3 * time.Minute: "3m", 7 * time.Second: "7s"}
	for d, want := range ages {
		if got := formatAge(d.Milliseconds()); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", d, got, want)
		}
	}
	if got := fileLine(hcl.Range{Filename: `C:\cfg\a.icewright.hcl`, Start: hcl.Pos{Line: 4}}); got != "a.icewright.hcl:4" {
		t.Errorf("fileLine = %q", got)
	}
	if got := reason("x", "1", hcl.Range{}, hcl.Range{}); got != "x = 1 (default)" {
		t.Errorf("reason = %q", got)
	}
}
