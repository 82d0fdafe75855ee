package main

import (
	"bytes"
	stdlog "log"
	"os"
	"strings"
	"testing"
	"time"
)

// Lines third-party code writes with the standard log package (iceberg-go's
// legacy-schema warning, the AWS SDK's log that providers hands to it) go
// through icewright's logger at their level and in its format (issue 43).
func TestThirdPartyLogRouted(t *testing.T) {
	var buf bytes.Buffer
	c := &cli{stderr: &buf, env: map[string]string{"ICEWRIGHT_LOG_FORMAT": "json"},
		now: func() time.Time { return time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC) }}
	if err := c.startLog(); err != nil {
		t.Fatal(err)
	}
	defer stdlog.SetOutput(os.Stderr)
	// iceberg-go's own line, twice (it says it on every run, once per
	// process): said once, in icewright's words, with what to do.
	v0 := `WARNING: iceberg_tables is on the legacy V0 schema (no iceberg_type column); set "jdbc.schema-version"="V1" to migrate to V1. Operating in V0-compatible mode (column-free queries).`
	stdlog.Print(v0)
	stdlog.Printf("WARN falling back to IMDSv1")
	stdlog.Print(v0)
	stdlog.Printf("DEBUG request sent") // below the default level
	got := buf.String()
	for _, want := range []string{
		`{"time":"2026-06-15T12:00:00Z","level":"WARN","msg":"a SQL catalog's iceberg_tables table has the legacy V0 schema`,
		`Harmless: icewright lists, reads and commits its tables the same`,
		`set properties = { \"jdbc.schema-version\" = \"V1\" } in that catalog block`,
		`{"time":"2026-06-15T12:00:00Z","level":"WARN","msg":"falling back to IMDSv1","from":"library"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "legacy V0"); n != 1 {
		t.Errorf("the legacy-schema warning is said %d times, want once:\n%s", n, got)
	}
	if strings.Contains(got, "request sent") || strings.Contains(got, "SDK ") {
		t.Errorf("a debug line or the SDK's own format at the warn level:\n%s", got)
	}
}
