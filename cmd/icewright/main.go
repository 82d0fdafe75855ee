// Command icewright is policy as code for Apache Iceberg table maintenance.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/icewright/icewright/providers/compaction"
)

func main() {
	os.Exit(mainRun(time.Now))
}

// mainRun is main with its clock passed in: the product runs on time.Now;
// the test binary's `icewright` (script_test.go) passes a fixed one, so the
// goldens come out the same on any day.
func mainRun(now func() time.Time) int {
	// Process-wide state is main's alone: compaction writes zstd pages with
	// a codec whose encoders keep a 2 MiB window instead of arrow-go's
	// pooled 16 MiB buffers (same bytes on disk; measured in
	// docs/benchmarks.md).
	if base, err := compress.GetCodec(compress.Codecs.Zstd); err == nil {
		compress.RegisterCodec(compress.Codecs.Zstd, compaction.LowMemoryZstd(base))
	} else {
		fmt.Fprintf(os.Stderr, "icewright: warning: zstd codec: %v\n", err)
	}
	return runAt(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ(), now)
}
