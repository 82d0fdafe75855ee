package main

import (
	"bytes"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// `icewright apply` (in-process, on the demo lakehouse) lowers the Go soft
// memory limit while it compacts and restores it afterwards; with GOMEMLIMIT
// in the environment it never touches it.
func TestApplyMemoryLimit(t *testing.T) {
	const before = 7 << 30
	old := debug.SetMemoryLimit(before)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })

	for _, tc := range []struct {
		name   string
		env    []string
		change bool
	}{
		{"default", nil, true},
		{"GOMEMLIMIT", []string{"GOMEMLIMIT=5GiB"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			environ := append([]string{"NO_COLOR=1", "HOME=" + os.Getenv("HOME")}, tc.env...)
			if code := run([]string{"demo", dir}, strings.NewReader(""), &out, &out, environ); code != 0 {
				t.Fatalf("demo: exit %d\n%s", code, out.String())
			}
			// The lowest limit in force while apply runs, polled.
			var lowest atomic.Int64
			lowest.Store(before)
			stop, polled := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(polled)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if l := debug.SetMemoryLimit(-1); l < lowest.Load() {
						lowest.Store(l)
					}
					time.Sleep(50 * time.Microsecond)
				}
			}()
			out.Reset()
			code := run([]string{"-chdir=" + dir, "apply", "-auto-approve"}, strings.NewReader(""), &out, &out, environ)
			close(stop)
			<-polled
			if code != 0 {
				t.Fatalf("apply: exit %d\n%s", code, out.String())
			}
			if !strings.Contains(out.String(), "compact") {
				t.Fatalf("the demo apply compacted nothing:\n%s", out.String())
			}
			got := lowest.Load()
			t.Logf("lowest limit during apply: %d MiB", got>>20)
			if tc.change && got >= before {
				t.Fatalf("the limit stayed %d during compaction", got)
			}
			if !tc.change && got != before {
				t.Fatalf("GOMEMLIMIT set, but apply changed the limit to %d", got)
			}
			if l := debug.SetMemoryLimit(-1); l != before {
				t.Fatalf("after apply the limit is %d, want %d restored", l, before)
			}
		})
	}
}
