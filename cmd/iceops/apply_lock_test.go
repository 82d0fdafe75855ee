package main

// Locking (docs/design.md §5.4, issue 16): two applies at once on the demo
// lakehouse share the work through the tables' leases, and a lease held by
// another run is a clear skip naming its owner and expiry.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/apply"
	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/internal/testenv"
	"github.com/iceops/iceops/providers/testkit"
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
	bin := buildIceops(t)
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
				cmd, stdout, stderr := startApply(t, bin, dir)
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
			if v, ok := tbl.Properties()[diff.LockProperty]; ok {
				t.Errorf("trial %d: %s still has its lease: %s", trial, tp.Address, v)
			}
			if loc, ok := inPolicy[tp.Address]; ok && tbl.MetadataLocation() != loc {
				t.Errorf("trial %d: in-policy table %s got a new metadata version", trial, tp.Address)
			}
			tableHealth(t, lake, name)
		}
		if code, out := runIceops(t, bin, dir, "plan", "-detailed-exitcode"); code != 0 {
			t.Errorf("trial %d: plan after both applies: exit %d\n%s", trial, code, out)
		}
	}
}

// setLease commits a lease on the table as another run would.
func setLease(t *testing.T, lake *testkit.Lakehouse, name, value string) {
	t.Helper()
	ctx := context.Background()
	tbl := lake.Reload(t, name)
	if _, _, err := lake.Catalog.CommitTable(ctx, tbl.Identifier(), nil,
		[]table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{diff.LockProperty: value})}); err != nil {
		t.Fatal(err)
	}
}

func TestApplyLeaseHeldByAnotherRun(t *testing.T) {
	bin := buildIceops(t)
	dir := filepath.Join(t.TempDir(), "lake")
	lake := demoLake(t, bin, dir)
	held := `{"owner":"alice@ci-7","run_id":"run-42","expires_at":"2099-01-02T03:04:05Z"}`
	setLease(t, lake, "analytics.events", held)
	before := lake.Reload(t, "analytics.events").MetadataLocation()

	code, out := runIceops(t, bin, dir, "apply", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply: exit %d (a table locked by another run is skipped, not failed)\n%s", code, out)
	}
	if !strings.Contains(out, "locked by alice@ci-7 (run run-42) until 2099-01-02T03:04:05Z") {
		t.Errorf("no message naming the holder and expiry:\n%s", out)
	}
	if got := lake.Reload(t, "analytics.events"); got.MetadataLocation() != before || got.Properties()[diff.LockProperty] != held {
		t.Errorf("the locked table was changed")
	}
	if compactions(lake.Reload(t, "analytics.clicks")) != 1 {
		t.Errorf("the unlocked table was not applied:\n%s", out)
	}

	// -lock-timeout waits; the lease is still held at the end: skipped after
	// about the timeout.
	start := time.Now()
	code, out = runIceops(t, bin, dir, "apply", "-auto-approve", "-lock-timeout=1500ms")
	if code != 0 || !strings.Contains(out, "locked by alice@ci-7") {
		t.Fatalf("apply -lock-timeout: exit %d\n%s", code, out)
	}
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("apply -lock-timeout=1500ms gave up after %s", d)
	}

	// An expired lease (its run died) is taken over.
	setLease(t, lake, "analytics.events", `{"owner":"alice@ci-7","run_id":"run-42","expires_at":"2020-01-02T03:04:05Z"}`)
	code, out = runIceops(t, bin, dir, "apply", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply over an expired lease: exit %d\n%s", code, out)
	}
	tbl := lake.Reload(t, "analytics.events")
	if compactions(tbl) != 1 {
		t.Errorf("the table with an expired lease was not compacted:\n%s", out)
	}
	if v, ok := tbl.Properties()[diff.LockProperty]; ok {
		t.Errorf("lease left after apply: %s", v)
	}
	if code, out := runIceops(t, bin, dir, "plan", "-detailed-exitcode"); code != 0 {
		t.Errorf("plan after apply: exit %d\n%s", code, out)
	}

	// -lock=false ignores leases (and leaves another run's in place).
	setLease(t, lake, "analytics.users", held)
	if code, out := runIceops(t, bin, dir, "apply", "-auto-approve", "-lock=false"); code != 0 || strings.Contains(out, "locked by") {
		t.Errorf("apply -lock=false: exit %d\n%s", code, out)
	}
	if lake.Reload(t, "analytics.users").Properties()[diff.LockProperty] != held {
		t.Error("apply -lock=false touched another run's lease")
	}
}
