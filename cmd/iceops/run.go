package main

import (
	"fmt"
	"io"
)

// run is the whole CLI; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) int {
	fmt.Fprintln(stderr, "iceops: not implemented yet")
	return 1
}
