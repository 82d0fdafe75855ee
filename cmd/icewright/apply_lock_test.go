package main

// Locking (docs/design.md §5.4, issues 16 and 26): two applies at once on
// the demo lakehouse share the work through the tables' leases (objects
// under <location>/_icewright_lock/, never a metadata commit), and a lease held
// by another run is a clear error naming its owner, since when and until
// when.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// compactions counts the table's snapshots that rewrote data files: the
// "replace" snapshots that added data files (a manifest rewrite is a
// replace too, but adds none).
func compactions(tbl *table.Table) int {
	n := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil || s.Summary.Operation != table.OpReplace {
			continue
		}
		if added, _ := strconv.Atoi(s.Summary.Properties["added-data-files"]); added > 0 {
			n++
		}
	}
	return n
}

func startApply(t *testing.T, bin, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-chdir=" + dir, "apply", "-auto-approve", "-json"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "USER=lock-test")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout, &stderr
}

func TestTwoAppliesAtOnce(t *testing.T) {
	bin := buildIcewright(t)
	for trial := range 3 {
		dir := filepath.Join(t.TempDir(), "lake")
		lake := demoLake(t, bin, dir)
		// stdout alone: stderr has plan's progress lines.
		planCmd := exec.Command(bin, "-chdir="+dir, "plan", "-json")
		planCmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, err := planCmd.Output()
		if err != nil {
			t.Fatalf("plan: %v\n%s", err, out)
		}
		var p diff.Plan
		if err := json.Unmarshal(out, &p); err != nil {
			t.Fatalf("plan -json: %v", err)
		}
		inPolicy := map[string]string{}
		for _, tp := range p.Tables {
			if len(tp.Actions) == 0 {
				inPolicy[tp.Address] = lake.Reload(t, strings.TrimPrefix(tp.Address, "demo.")).MetadataLocation()
			}
		}

		var (
			wg      sync.WaitGroup
			results [2]apply.Results
			codes   [2]int
			logs    [2]string
		)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The run that finds a table held waits for it, then finds
				// the work done and does nothing more.
				cmd, stdout, stderr := startApply(t, bin, dir, "-lock-timeout=5m")
				codes[i], _ = testenv.ExitCode(cmd.Wait()) // -1: it could not run
				logs[i] = stderr.String()
				if err := json.Unmarshal(resultsLine(stdout.Bytes()), &results[i]); err != nil {
					t.Errorf("apply %d: results: %v\n%s", i, err, stdout.String())
				}
			}()
		}
		wg.Wait()
		for i := range 2 {
			if codes[i] != 0 {
				t.Fatalf("trial %d: apply %d exited %d\n%s", trial, i, codes[i], logs[i])
			}
		}
		// Together the two runs did one run's work: every planned action is
		// done by exactly one of them.
		doneBy := map[string]int{}
		for _, r := range results {
			for _, tr := range r.Tables {
				for _, a := range tr.Actions {
					if a.Status == apply.StatusDone {
						doneBy[tr.Address+" "+string(a.Type)]++
					}
				}
			}
		}
		done := results[0].Summary.ActionsDone + results[1].Summary.ActionsDone
		if done != p.Summary.Actions {
			t.Errorf("trial %d: %d actions done in all, the plan has %d: %v", trial, done, p.Summary.Actions, doneBy)
		}
		for k, n := range doneBy {
			if n != 1 {
				t.Errorf("trial %d: %s done %d times", trial, k, n)
			}
		}
		if results[0].RunID == "" || results[0].RunID == results[1].RunID {
			t.Errorf("run ids %q and %q", results[0].RunID, results[1].RunID)
		}
		for _, tp := range p.Tables {
			name := strings.TrimPrefix(tp.Address, "demo.")
			tbl := lake.Reload(t, name)
			want := 0
			for _, a := range tp.Actions {
				if a.Type == diff.Compact {
					want = 1
				}
			}
			if got := compactions(tbl); got != want {
				t.Errorf("trial %d: %s compacted %d times, want %d", trial, tp.Address, got, want)
			}
			if left := leaseFiles(t, tbl.Location()); len(left) > 0 {
				t.Errorf("trial %d: %s still has leases: %v", trial, tp.Address, left)
			}
			if loc, ok := inPolicy[tp.Address]; ok && tbl.MetadataLocation() != loc {
				t.Errorf("trial %d: in-policy table %s got a new metadata version", trial, tp.Address)
			}
			tableHealth(t, lake, name)
		}
		if code, out := runIcewright(t, bin, dir, "plan", "-detailed-exitcode"); code != 0 {
			t.Errorf("trial %d: plan after both applies: exit %d\n%s", trial, code, out)
		}
	}
}

// leaseFiles lists the lease objects under a local table location.
func leaseFiles(t *testing.T, location string) []string {
	t.Helper()
	dir := filepath.Join(testkit.LocalPath(t, location), "_icewright_lock")
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "lease-") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// setLease writes a lease on the table as another run would (generation 1).
func setLease(t *testing.T, lake *testkit.Lakehouse, name, value string) {
	t.Helper()
	tbl := lake.Reload(t, name)
	dir := filepath.Join(testkit.LocalPath(t, tbl.Location()), "_icewright_lock")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range leaseFiles(t, tbl.Location()) {
		_ = os.Remove(f)
	}
	if err := os.WriteFile(filepath.Join(dir, "lease-00000000000000000001.json"), []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lapseLeases moves the expiry of every lease under root into the past,
// as if the lease TTL had gone by (the test is the clock).
func lapseLeases(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) != "_icewright_lock" || !strings.HasPrefix(d.Name(), "lease-") {
			return err
		}
		var l map[string]any
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		l["expires_at"] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
		b, _ = json.Marshal(l)
		n++
		return os.WriteFile(p, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestApplyLeaseHeldByAnotherRun(t *testing.T) {
	bin := buildIcewright(t)
	dir := filepath.Join(t.TempDir(), "lake")
	lake := demoLake(t, bin, dir)
	held := `{"owner":"alice@ci-7","run_id":"run-42","since":"2026-12-01T00:00:00Z","expires_at":"2099-01-02T03:04:05Z"}`
	setLease(t, lake, "analytics.events", held)
	before := lake.Reload(t, "analytics.events").MetadataLocation()

	// A table another run holds fails the apply (exit 1): a CD job whose
	// tables were skipped must not read green.
	code, out := runIcewright(t, bin, dir, "apply", "-auto-approve")
	if code != 1 {
		t.Fatalf("apply: exit %d, want 1 (a table locked by another run is an error without -lock-skip-ok)\n%s", code, out)
	}
	if !strings.Contains(out, "locked by alice@ci-7 (run run-42, since 2026-12-01T00:00:00Z) until 2099-01-02T03:04:05Z") ||
		!strings.Contains(out, "icewright force-unlock run-42 demo.analytics.events") {
		t.Errorf("no message naming the holder, since when, until when and the way out:\n%s", out)
	}
	// The reason is an Error: line of its own (stderr), not only a cell of
	// the results; the summary counts tables and actions apart (issue 43).
	if !regexp.MustCompile(`(?m)^Error: demo\.analytics\.events: .*locked by alice@ci-7`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^Apply finished with errors: tables: 1 changed, 1 failed; actions: \d+ done, \d+ skipped, 0 failed`).MatchString(out) {
		t.Errorf("no Error: line for the locked table, or a summary mixing tables and actions:\n%s", out)
	}
	if got := lake.Reload(t, "analytics.events"); got.MetadataLocation() != before {
		t.Errorf("the locked table was changed")
	}
	if compactions(lake.Reload(t, "analytics.clicks")) != 1 {
		t.Errorf("the unlocked table was not applied:\n%s", out)
	}
	clicks := lake.Reload(t, "analytics.clicks").MetadataLocation()

	// -lock-timeout waits and says so; the lease is still held at the end:
	// skipped after about the timeout. -lock-skip-ok makes that a warning.
	start := time.Now()
	code, out = runIcewright(t, bin, dir, "apply", "-auto-approve", "-lock-timeout=1500ms", "-lock-skip-ok")
	if code != 0 || !strings.Contains(out, "locked by alice@ci-7") || !strings.Contains(out, "waiting up to") {
		t.Fatalf("apply -lock-timeout -lock-skip-ok: exit %d\n%s", code, out)
	}
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("apply -lock-timeout=1500ms gave up after %s", d)
	}
	// The table with nothing left to do got no lease and no commit.
	if got := lake.Reload(t, "analytics.clicks").MetadataLocation(); got != clicks {
		t.Errorf("apply committed to a table in policy: %s -> %s", clicks, got)
	}

	// An expired lease (its run died) is taken over.
	setLease(t, lake, "analytics.events", `{"owner":"alice@ci-7","run_id":"run-42","expires_at":"2020-01-02T03:04:05Z"}`)
	code, out = runIcewright(t, bin, dir, "apply", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply over an expired lease: exit %d\n%s", code, out)
	}
	tbl := lake.Reload(t, "analytics.events")
	if compactions(tbl) != 1 {
		t.Errorf("the table with an expired lease was not compacted:\n%s", out)
	}
	if left := leaseFiles(t, tbl.Location()); len(left) > 0 {
		t.Errorf("lease left after apply: %v", left)
	}
	if code, out := runIcewright(t, bin, dir, "plan", "-detailed-exitcode"); code != 0 {
		t.Errorf("plan after apply: exit %d\n%s", code, out)
	}

	// force-unlock removes a named run's lease, and only that run's.
	setLease(t, lake, "analytics.users", held)
	if code, out := runIcewright(t, bin, dir, "force-unlock", "-force", "run-41", "demo.analytics.users"); code != 1 || !strings.Contains(out, "run run-42's") {
		t.Errorf("force-unlock of another run id: exit %d\n%s", code, out)
	}
	if code, out := runIcewright(t, bin, dir, "force-unlock", "run-42", "demo.analytics.users"); code != 1 || !strings.Contains(out, "not a terminal") {
		t.Errorf("force-unlock without a terminal or -force: exit %d\n%s", code, out)
	}
	if len(leaseFiles(t, lake.Reload(t, "analytics.users").Location())) != 1 {
		t.Fatal("a refused force-unlock removed the lease")
	}
	if code, out := runIcewright(t, bin, dir, "force-unlock", "-force", "run-42", "demo.analytics.users"); code != 0 || !strings.Contains(out, "Removed the lease of run run-42 on demo.analytics.users (held by alice@ci-7") {
		t.Errorf("force-unlock: exit %d\n%s", code, out)
	}
	if left := leaseFiles(t, lake.Reload(t, "analytics.users").Location()); len(left) > 0 {
		t.Errorf("force-unlock left %v", left)
	}

	// -lock=false ignores leases (and leaves another run's in place).
	setLease(t, lake, "analytics.users", held)
	if code, out := runIcewright(t, bin, dir, "apply", "-auto-approve", "-lock=false"); code != 0 || strings.Contains(out, "locked by") {
		t.Errorf("apply -lock=false: exit %d\n%s", code, out)
	}
	if len(leaseFiles(t, lake.Reload(t, "analytics.users").Location())) != 1 {
		t.Error("apply -lock=false touched another run's lease")
	}
}
