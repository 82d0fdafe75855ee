package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/testkit"
)

// lakeWithDebt builds a real sqlite lakehouse with one partitioned table
// that has many small files and old snapshots, and a configuration for it.
func lakeWithDebt(t *testing.T) (dir string, lake *testkit.Lakehouse) {
	t.Helper()
	dir = t.TempDir()
	lake = testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	tbl := lake.CreateTable(t, "analytics.events", testkit.TableOptions{Partitioned: true})
	tbl = testkit.Append(t, tbl, 12, 50, 3)
	lake.Backdate(t, tbl, 20*24*time.Hour)
	// A table no block matches: it must never appear.
	lake.CreateTable(t, "scratch.tmp", testkit.TableOptions{})
	cfg := lake.HCL() + `
policy "base" {
  target_file_size = "128MiB"
  compaction {
    min_input_files = 2
  }
  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 3
  }
  properties = {
    "write.parquet.compression-codec" = "zstd"
  }
}

tables "lake.analytics.*" {
  policy = policy.base
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, lake
}

func TestPlanApplyOnRealTable(t *testing.T) {
	dir, lake := lakeWithDebt(t)
	chdir := "-chdir=" + dir

	out, errOut, code := runIn(t, &cli{}, chdir, "plan", "-json")
	if code != exitOK {
		t.Fatalf("plan -json: exit %d\n%s", code, errOut)
	}
	var doc any
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("plan -json is not JSON: %v\n%s", err, out)
	}
	if err := checkPlanDoc(doc); err != nil {
		t.Fatalf("plan document: %v\n%s", err, out)
	}
	if strings.Contains(out, "scratch.tmp") {
		t.Error("a table no block matches appears in the plan")
	}
	for _, kind := range []string{`"update_properties"`, `"compact"`, `"expire_snapshots"`} {
		if !strings.Contains(out, kind) {
			t.Errorf("plan has no %s action:\n%s", kind, out)
		}
	}
	// stderr has the progress log of a run without a terminal (a line per
	// catalog and table, timestamped) and nothing else: no diagnostic.
	for _, line := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if line != "" && !progressLine.MatchString(line) {
			t.Errorf("plan -json wrote more than progress to stderr: %q", line)
		}
	}

	// The text agrees with the JSON summary.
	text, _, code := runIn(t, &cli{}, chdir, "plan", "-detailed-exitcode")
	if code != exitChanges {
		t.Fatalf("plan -detailed-exitcode: exit %d, want 2\n%s", code, text)
	}
	t.Logf("plan:\n%s", text)
	if !strings.Contains(text, `~ table "lake.analytics.events" {`) || !strings.Contains(text, "Plan: 1 table to change") {
		t.Errorf("text plan:\n%s", text)
	}

	// A saved plan shows the same document.
	_, errOut, code = runIn(t, &cli{}, chdir, "plan", "-out=saved.plan")
	if code != exitOK {
		t.Fatalf("plan -out: exit %d: %s", code, errOut)
	}
	st, err := os.Stat(filepath.Join(dir, "saved.plan"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("saved plan mode %v, want 0600", st.Mode().Perm())
	}
	shown, errOut, code := runIn(t, &cli{}, chdir, "show", "-json", "saved.plan")
	if code != exitOK {
		t.Fatalf("show -json: exit %d: %s", code, errOut)
	}
	if a, b := jsonWithout(t, shown, "created_at"), jsonWithout(t, out, "created_at"); a != b {
		t.Errorf("show -json differs from plan -json:\n%s\n---\n%s", a, b)
	}

	before := lake.Reload(t, "analytics.events").MetadataLocation()

	// No terminal and no -auto-approve: refused, nothing changed.
	_, errOut, code = runIn(t, &cli{stdinTTY: false, stdin: strings.NewReader("yes\n")}, chdir, "apply")
	if code != exitError || !strings.Contains(errOut, "standard input is not a terminal") {
		t.Fatalf("apply without a terminal: exit %d: %s", code, errOut)
	}
	// Answering anything but yes cancels.
	_, errOut, code = runIn(t, &cli{stdinTTY: true, stdin: strings.NewReader("y\n")}, chdir, "apply")
	if code != exitError || !strings.Contains(errOut, "Apply cancelled") || !strings.Contains(errOut, approvalPrompt) {
		t.Fatalf("apply answered y: exit %d: %s", code, errOut)
	}
	if got := lake.Reload(t, "analytics.events").MetadataLocation(); got != before {
		t.Fatalf("table changed although apply was refused: %s -> %s", before, got)
	}
	rows := testkit.ScanRows(t, lake.Reload(t, "analytics.events"))

	// yes applies; the results table is on stdout, the prompt on stderr.
	res, errOut, code := runIn(t, &cli{stdinTTY: true, stdin: strings.NewReader("yes\n")}, chdir, "apply")
	if code != exitOK {
		t.Fatalf("apply yes: exit %d\nstdout:\n%s\nstderr:\n%s", code, res, errOut)
	}
	t.Logf("apply:\n%s\nstderr:\n%s", res, errOut)
	if !strings.Contains(res, "Apply complete!") || !strings.Contains(res, "compact") {
		t.Errorf("results:\n%s", res)
	}
	if strings.Contains(res, approvalPrompt) {
		t.Error("the prompt went to stdout")
	}
	if got := testkit.ScanRows(t, lake.Reload(t, "analytics.events")); got != rows {
		t.Errorf("rows %d after apply, %d before", got, rows)
	}

	// One apply converges.
	text, errOut, code = runIn(t, &cli{}, chdir, "plan", "-detailed-exitcode")
	if code != exitOK {
		t.Fatalf("plan after apply: exit %d\n%s\n%s", code, text, errOut)
	}
	if !strings.Contains(text, "No changes. 1 table is in policy.") {
		t.Errorf("plan after apply:\n%s", text)
	}

	// The plan saved before the apply no longer fits the table: apply
	// reports what it skipped instead of deleting what nobody reviewed.
	res, errOut, code = runIn(t, &cli{}, chdir, "apply", "-json", "saved.plan")
	t.Logf("apply of an outdated saved plan: exit %d\n%s", code, errOut)
	var results map[string]any
	if err := json.Unmarshal(resultsLine([]byte(res)), &results); err != nil {
		t.Fatalf("apply -json is not JSON: %v\n%s", err, res)
	}
}

// progressLine is a log line of views.Progress: an RFC 3339 UTC time.
var progressLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \S+`)

func jsonWithout(t *testing.T, s string, key string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	delete(v, key)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
