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
	stdlog.Printf("WARNING: iceberg_tables is on the legacy V0 schema (no iceberg_type column)")
	stdlog.Printf("WARN falling back to IMDSv1")
	stdlog.Printf("DEBUG request sent") // below the default level
	got := buf.String()
	for _, want := range []string{
		`{"time":"2026-06-15T12:00:00Z","level":"WARN","msg":"iceberg_tables is on the legacy V0 schema (no iceberg_type column)","from":"library"}`,
		`{"time":"2026-06-15T12:00:00Z","level":"WARN","msg":"falling back to IMDSv1","from":"library"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "request sent") || strings.Contains(got, "SDK ") {
		t.Errorf("a debug line or the SDK's own format at the warn level:\n%s", got)
	}
}
