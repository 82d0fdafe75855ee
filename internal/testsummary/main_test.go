package main

import (
	"bytes"
	"strings"
	"testing"
)

// stream is `go test -json` of two packages, as cmd/test2json writes it: a
// test skipped for want of PostgreSQL (with a subtest skipped the same
// way), one skipped by -short, one failing with a failed and a passing
// subtest, and passing ones.
const stream = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestPG"}
{"Action":"output","Package":"a","Test":"TestPG","Output":"=== RUN   TestPG\n"}
{"Action":"output","Package":"a","Test":"TestPG/sub","Output":"=== RUN   TestPG/sub\n"}
{"Action":"output","Package":"a","Test":"TestPG/sub","Output":"    testenv.go:53: needs PostgreSQL (ICEWRIGHT_TEST_PG_DSN is not set): run scripts/services.sh start\n"}
{"Action":"skip","Package":"a","Test":"TestPG/sub"}
{"Action":"output","Package":"a","Test":"TestPG","Output":"    testenv.go:53: needs PostgreSQL (ICEWRIGHT_TEST_PG_DSN is not set): run scripts/services.sh start\n"}
{"Action":"skip","Package":"a","Test":"TestPG"}
{"Action":"output","Package":"a","Test":"TestShort","Output":"    x_test.go:9: builds tables: not in -short\n"}
{"Action":"skip","Package":"a","Test":"TestShort"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Output":"PASS\n"}
{"Action":"output","Package":"a","Output":"ok  \ta\t0.01s\n"}
{"Action":"pass","Package":"a"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"b","Test":"TestBad/good","Output":"    --- PASS: TestBad/good (0.00s)\n"}
{"Action":"pass","Package":"b","Test":"TestBad/good"}
{"Action":"output","Package":"b","Test":"TestBad/bad","Output":"    b_test.go:7: got 1, want 2\n"}
{"Action":"output","Package":"b","Test":"TestBad/bad","Output":"    --- FAIL: TestBad/bad (0.00s)\n"}
{"Action":"fail","Package":"b","Test":"TestBad/bad"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"b","Test":"TestBad"}
{"Action":"output","Package":"b","Test":"TestS3","Output":"    testenv.go:91: needs an S3 server (ICEWRIGHT_TEST_S3_ENDPOINT is not set): run scripts/services.sh start\n"}
{"Action":"skip","Package":"b","Test":"TestS3"}
{"Action":"output","Package":"b","Output":"FAIL\n"}
{"Action":"output","Package":"b","Output":"FAIL\tb\t0.02s\n"}
{"Action":"fail","Package":"b"}
FAIL
`

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	s := newSummary(&out, false)
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	want := "ok  \ta\t0.01s\n" +
		"    b_test.go:7: got 1, want 2\n    --- FAIL: TestBad/bad (0.00s)\n--- FAIL: TestBad (0.00s)\n" +
		"FAIL\nFAIL\tb\t0.02s\nFAIL\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	closing := s.closing()
	for _, w := range []string{"3 tests (2 top-level)", "PostgreSQL 2", "an S3 server 1", "1 skipped for other reasons", AllCommand} {
		if !strings.Contains(closing, w) {
			t.Errorf("closing line %q lacks %q", closing, w)
		}
	}
	if strings.Contains(closing, "\n") {
		t.Errorf("closing is more than one line: %q", closing)
	}

	var all bytes.Buffer
	v := newSummary(&all, true)
	if err := v.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(all.String(), "--- PASS: TestOK") || !strings.Contains(all.String(), "=== RUN   TestPG") {
		t.Errorf("-v output lacks the passing tests' lines:\n%s", all.String())
	}
	if newSummary(&out, false).closing() != "" {
		t.Error("a run with no skips has a closing line")
	}
}
