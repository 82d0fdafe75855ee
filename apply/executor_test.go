package apply

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

// toyEngine is a second implementation of the execution seam: it keeps
// the session for loading tables and leases, and replaces every executor
// with one that records what apply asks and changes nothing, as a Spark or
// Trino executor would stand in for the in-process ones.
type toyEngine struct {
	*providers.Session
	mu       sync.Mutex
	calls    [][]diff.ActionType
	requests []providers.ExecRequest
	conflict map[diff.ActionType]int // conflicts to report before succeeding
}

func (e *toyEngine) Executor(t diff.ActionType) (providers.Executor, bool) {
	if !t.Known() {
		return nil, false
	}
	return providers.ExecutorFunc(func(ctx context.Context, req providers.ExecRequest) (*providers.Table, providers.ExecResult, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		var types []diff.ActionType
		for _, a := range req.Actions {
			types = append(types, a.Type)
		}
		e.calls = append(e.calls, types)
		e.requests = append(e.requests, req)
		if e.conflict[t] > 0 {
			e.conflict[t]--
			return nil, providers.ExecResult{}, providers.ErrConflict
		}
		req.Progress(1, 1, "files")
		return req.Table, providers.ExecResult{Committed: true, FilesBefore: 10, FilesAfter: 1, Note: "toy " + string(t)}, nil
	}), true
}

// TestApplyDrivesAnyExecutor: apply runs a plan through whatever executors
// its backend gives, in docs/design.md §5.1 order, properties and the sort
// order in one call, a conflict retried; each executor gets the table's
// handle, its policy and the approved action, and its result becomes the
// action's result.
func TestApplyDrivesAnyExecutor(t *testing.T) {
	e := newEnv(t, "")
	e.writeConfig(e.lake.HCL() + sortedPolicyHCL(`["event_id"]`))
	e.debtTable(orders, nil)
	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	var planned []diff.ActionType
	for _, a := range tp.Actions {
		planned = append(planned, a.Type)
	}
	want := []diff.ActionType{diff.UpdateProperties, diff.ReplaceSortOrder, diff.Compact, diff.RewriteManifests, diff.ExpireSnapshots, diff.RemoveOrphanFiles}
	if len(planned) < 5 || !slices.Equal(planned, want[:len(planned)]) {
		t.Fatalf("plan %v, want %v", planned, want)
	}

	toy := &toyEngine{Session: e.sess, conflict: map[diff.ActionType]int{diff.Compact: 1}}
	var events []Event
	var mu sync.Mutex
	res, err := run(context.Background(), e.cfg, toy, p, ApplyOptions{Version: "test",
		Backoff: func(int) time.Duration { return time.Millisecond },
		Progress: func(ev Event) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := [][]diff.ActionType{planned[:2], {diff.Compact}, {diff.Compact}}
	for _, typ := range planned[3:] {
		wantCalls = append(wantCalls, []diff.ActionType{typ})
	}
	if !slices.EqualFunc(toy.calls, wantCalls, slices.Equal) {
		t.Fatalf("executor calls %v, want %v", toy.calls, wantCalls)
	}
	for i, req := range toy.requests {
		if req.Table == nil || req.Table.Address() != "lake."+orders || req.Table.UUID() != tp.Observed.TableUUID {
			t.Errorf("call %d: table handle %+v", i, req.Table)
		}
		if req.Policy == nil || req.Policy.Address != "lake."+orders || req.Now == nil {
			t.Errorf("call %d: policy or clock missing", i)
		}
	}
	tr := tableResult(t, res, "lake."+orders)
	if tr.Status != StatusDone || tr.Attempts != 2 || len(tr.Actions) != len(planned) {
		t.Fatalf("result %s, %d attempts:\n%s", tr.Status, tr.Attempts, describe(res))
	}
	for _, a := range tr.Actions {
		// The sort order rode in the properties' call: it has its result.
		note := "toy " + string(a.Type)
		if a.Type == diff.ReplaceSortOrder {
			note = "toy " + string(diff.UpdateProperties)
		}
		if a.Status != StatusDone || a.Reason != note || a.FilesAfter != 1 {
			t.Errorf("%s: %+v", a.Type, a)
		}
	}
	// The toy changed nothing: the table is the version planned.
	if tr.MetadataAfter != tp.Observed.MetadataLocation {
		t.Errorf("metadata moved: %s", tr.MetadataAfter)
	}
	var progress, retries int
	for _, ev := range events {
		switch ev.Phase {
		case PhaseProgress:
			progress++
		case PhaseRetry:
			retries++
		}
	}
	if progress == 0 || retries != 1 {
		t.Errorf("%d progress events, %d retries", progress, retries)
	}

	// A kind the engine has no executor for fails its action, names it,
	// and runs nothing after it.
	none := &noExecutor{Session: e.sess}
	res, err = run(context.Background(), e.cfg, none, p, ApplyOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	tr = tableResult(t, res, "lake."+orders)
	if tr.Status != StatusFailed || !strings.Contains(tr.Error, `unknown action "update_properties"`) {
		t.Fatalf("no executor: %s %q", tr.Status, tr.Error)
	}
	for _, a := range tr.Actions[2:] {
		if a.Status != StatusSkipped {
			t.Errorf("%s ran after a failure: %s", a.Type, a.Status)
		}
	}
}

type noExecutor struct{ *providers.Session }

func (noExecutor) Executor(diff.ActionType) (providers.Executor, bool) { return nil, false }

// TestFailureIsTyped: a table whose commit keeps conflicting past the
// retries stops with a Failure that says what failed (the action), where
// (execute), why (a concurrent writer's commit won) and after how many
// retries, and whose text is the table's error.
func TestFailureIsTyped(t *testing.T) {
	e := newEnv(t, "")
	e.writeConfig(e.lake.HCL() + sortedPolicyHCL(`["event_id"]`))
	e.debtTable(orders, nil)
	p := e.plan()

	toy := &toyEngine{Session: e.sess, conflict: map[diff.ActionType]int{diff.Compact: 5}}
	res, err := run(context.Background(), e.cfg, toy, p, ApplyOptions{Version: "test", MaxRetries: 2,
		Backoff: func(int) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	tr := tableResult(t, res, "lake."+orders)
	f := tr.Failure
	if tr.Status != StatusFailed || f == nil {
		t.Fatalf("result %s, failure %v:\n%s", tr.Status, f, describe(res))
	}
	if f.Stage != StageExecute || f.Action != diff.Compact || !f.Conflict() || f.Retries != 2 || f.Interrupted || f.Locked() {
		t.Errorf("failure %+v (conflict %v)", f, f.Conflict())
	}
	if want := "compact: " + providers.ErrConflict.Error(); tr.Error != want || f.Error() != want {
		t.Errorf("error %q, failure %q, want %q", tr.Error, f.Error(), want)
	}
	if !errors.Is(f, providers.ErrConflict) {
		t.Error("the failure does not unwrap to its cause")
	}

	// A table whose actions all ran has no Failure.
	res, err = run(context.Background(), e.cfg, &toyEngine{Session: e.sess}, p, ApplyOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if tr := tableResult(t, res, "lake."+orders); tr.Status != StatusDone || tr.Failure != nil || tr.Error != "" {
		t.Errorf("a done table: %s, failure %v, error %q", tr.Status, tr.Failure, tr.Error)
	}
}
