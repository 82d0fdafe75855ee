// Command testsummary reads `go test -json` on stdin and prints what plain
// `go test` would (each package's ok/FAIL line, the output of failing tests,
// build errors; with -v everything), then one closing line counting the
// tests that skipped, grouped by the server or tool they lacked, with the
// command that runs them all. scripts/test.sh pipes the suite through it
// when ICEWRIGHT_REQUIRE_SERVICES is not set, so that a run without the
// servers does not look like a whole one.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output events
	Test       string
	Output     string
}

// AllCommand runs every test, starting the servers they need.
const AllCommand = "bash scripts/test.sh -all"

func main() {
	verbose := flag.Bool("v", false, "print every test's output, as go test -v")
	flag.Parse()
	s := newSummary(os.Stdout, *verbose)
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if line := s.closing(); line != "" {
		fmt.Fprintln(os.Stdout, line)
	}
}

type line struct {
	test, text string
}

type summary struct {
	w       io.Writer
	verbose bool
	// per package and top-level test: its and its subtests' output lines,
	// kept until it ends.
	pending map[string][]line
	result  map[string]string // package + test -> pass, fail, skip
	skipped map[string]int    // why -> tests
	topSkip map[string]int    // why -> top-level tests
}

func newSummary(w io.Writer, verbose bool) *summary {
	return &summary{w: w, verbose: verbose, pending: map[string][]line{}, result: map[string]string{}, skipped: map[string]int{}, topSkip: map[string]int{}}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		var e event
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &e) != nil {
			// Not an event (go's own messages, a panic before the test
			// binary ran): shown as it came.
			fmt.Fprintf(s.w, "%s\n", raw)
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func top(test string) string {
	t, _, _ := strings.Cut(test, "/")
	return t
}

func (s *summary) event(e event) {
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.w, e.Output)
	case e.Test == "":
		// Package lines: ok, FAIL, "? pkg [no test files]", coverage. The
		// bare PASS the test binary prints shows only with -v.
		if e.Action == "output" && (s.verbose || e.Output != "PASS\n") {
			fmt.Fprint(s.w, e.Output)
		}
	case e.Action == "output":
		if s.verbose {
			fmt.Fprint(s.w, e.Output)
		}
		k := e.Package + " " + top(e.Test)
		s.pending[k] = append(s.pending[k], line{e.Test, e.Output})
	case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
		s.result[e.Package+" "+e.Test] = e.Action
		if e.Action == "skip" {
			why := s.skipReason(e)
			s.skipped[why]++
			if !strings.Contains(e.Test, "/") {
				s.topSkip[why]++
			}
		}
		if strings.Contains(e.Test, "/") {
			return
		}
		k := e.Package + " " + e.Test
		if e.Action == "fail" && !s.verbose {
			// As go test prints a failed test: its lines and those of its
			// failed subtests, without the === progress lines.
			for _, l := range s.pending[k] {
				if strings.HasPrefix(l.text, "=== ") {
					continue
				}
				if l.test != e.Test && s.result[e.Package+" "+l.test] != "fail" {
					continue
				}
				fmt.Fprint(s.w, l.text)
			}
		}
		delete(s.pending, k)
	}
}

// needs finds the "needs X" of internal/testenv's skips: the server or tool
// a test lacked.
var needs = regexp.MustCompile(`: needs (.+?)(?: \(| in /|: |$)`)

func (s *summary) skipReason(e event) string {
	for _, l := range s.pending[e.Package+" "+top(e.Test)] {
		if l.test != e.Test {
			continue
		}
		if m := needs.FindStringSubmatch(strings.TrimRight(l.text, "\n")); m != nil {
			return m[1]
		}
	}
	return ""
}

// closing is the last line: how many tests skipped for want of what, and
// the command that runs them; "" when nothing skipped for want of a server
// or tool.
func (s *summary) closing() string {
	var parts []string
	total, tops := 0, 0
	for why, n := range s.skipped {
		if why == "" {
			continue
		}
		total += n
		tops += s.topSkip[why]
		parts = append(parts, fmt.Sprintf("%s %d", why, n))
	}
	if total == 0 {
		return ""
	}
	sort.Strings(parts)
	other := ""
	if n := s.skipped[""]; n > 0 {
		other = fmt.Sprintf(" (and %d skipped for other reasons, e.g. -short)", n)
	}
	noun := "tests"
	if total == 1 {
		noun = "test"
	}
	return fmt.Sprintf("NOT THE WHOLE SUITE: %d %s (%d top-level) skipped for want of a server or tool: %s%s. Run them all: %s",
		total, noun, tops, strings.Join(parts, ", "), other, AllCommand)
}
