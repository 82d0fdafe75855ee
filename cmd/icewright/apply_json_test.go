package main

import "bytes"

// resultsLine is the results document of an apply -json stream: its last
// line (docs/plan-format.md, apply -json).
func resultsLine(stdout []byte) []byte {
	lines := bytes.Split(bytes.TrimRight(stdout, "\n"), []byte("\n"))
	return lines[len(lines)-1]
}
