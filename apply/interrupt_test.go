package apply

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
)

// slowEngine's compaction works until release is closed, or until its
// context is cancelled; the other executors do nothing.
type slowEngine struct {
	*providers.Session
	started chan struct{}
	release chan struct{}
	sawCtx  chan error // what the compaction's context said when it ended
}

func (e *slowEngine) Executor(t diff.ActionType) (providers.Executor, bool) {
	return providers.ExecutorFunc(func(ctx context.Context, req providers.ExecRequest) (*providers.Table, providers.ExecResult, error) {
		if t != diff.Compact {
			return req.Table, providers.ExecResult{Committed: true}, nil
		}
		close(e.started)
		select {
		case <-e.release:
			e.sawCtx <- ctx.Err()
			return req.Table, providers.ExecResult{Committed: true, FilesBefore: 10, FilesAfter: 1}, nil
		case <-ctx.Done():
			e.sawCtx <- ctx.Err()
			return nil, providers.ExecResult{}, ctx.Err()
		}
	}), true
}

func newSlowEngine(s *providers.Session) *slowEngine {
	return &slowEngine{Session: s, started: make(chan struct{}), release: make(chan struct{}), sawCtx: make(chan error, 1)}
}

// TestFirstInterruptLetsRunningActionFinish (issue 26): the first Ctrl-C
// does not cancel a running compaction; it finishes and is done, nothing
// after it starts, and the table reads "interrupted", not "failed".
func TestFirstInterruptLetsRunningActionFinish(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := e.plan()
	eng := newSlowEngine(e.sess)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-eng.started
		cancel() // the first interrupt, while the compaction runs
		time.Sleep(100 * time.Millisecond)
		close(eng.release)
	}()
	res, err := run(ctx, e.cfg, eng, p, ApplyOptions{Abort: context.Background()})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-eng.sawCtx; got != nil {
		t.Fatalf("the running compaction's context was cancelled by the first interrupt: %v", got)
	}
	tr := tableResult(t, res, "lake."+orders)
	if !res.Interrupted || tr.Status != StatusInterrupted {
		t.Fatalf("want an interrupted table:\n%s", describe(res))
	}
	for _, a := range tr.Actions {
		switch {
		case a.Type == diff.Compact && a.Status != StatusDone:
			t.Errorf("the compaction running at the interrupt is %s, want done:\n%s", a.Status, describe(res))
		case a.Type.Order() > diff.Compact.Order() && a.Status != StatusSkipped:
			t.Errorf("%s is %s after the interrupt, want skipped", a.Type, a.Status)
		}
	}
	if res.Summary.TablesFailed != 0 || res.Summary.TablesInterrupted != 1 {
		t.Errorf("summary %+v", res.Summary)
	}
}

// TestSecondInterruptStopsRunningAction: the second Ctrl-C (Abort) stops
// the running compaction at once; it is reported interrupted.
func TestSecondInterruptStopsRunningAction(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := e.plan()
	eng := newSlowEngine(e.sess)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	abort, cancelAbort := context.WithCancel(context.Background())
	defer cancelAbort()
	go func() {
		<-eng.started
		cancel()
		cancelAbort()
	}()
	res, err := run(ctx, e.cfg, eng, p, ApplyOptions{Abort: abort})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-eng.sawCtx; !errors.Is(got, context.Canceled) {
		t.Fatalf("the second interrupt did not reach the compaction: %v", got)
	}
	tr := tableResult(t, res, "lake."+orders)
	var compact *ActionResult
	for i := range tr.Actions {
		if tr.Actions[i].Type == diff.Compact {
			compact = &tr.Actions[i]
		}
	}
	if compact == nil || compact.Status != StatusInterrupted || tr.Status != StatusInterrupted {
		t.Fatalf("want the compaction and the table interrupted:\n%s", describe(res))
	}
}

// TestInterruptBoundAfterFirstSignal: a running action gets FinishWithin
// after the first interrupt, then it is stopped.
func TestInterruptBoundAfterFirstSignal(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	p := e.plan()
	eng := newSlowEngine(e.sess)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-eng.started
		cancel()
	}()
	start := time.Now()
	res, err := run(ctx, e.cfg, eng, p, ApplyOptions{FinishWithin: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-eng.sawCtx; got == nil {
		t.Fatal("the compaction was never stopped")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("stopped after %s", d)
	}
	if tr := tableResult(t, res, "lake."+orders); tr.Status != StatusInterrupted {
		t.Fatalf("table %s:\n%s", tr.Status, describe(res))
	}
}
