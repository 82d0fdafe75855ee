package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/icewright/icewright/cmd/icewright/internal/views"
)

// interrupts is apply's one signal listener: the two-stage Ctrl-C of
// docs/design.md §5.4, each signal acknowledged on stderr. The first
// SIGINT or SIGTERM cancels stop: no new table or action starts, and the
// actions already running finish (bounded: apply.ApplyOptions.FinishWithin),
// a compaction committing its rewrite and an expiry its deletions; once
// the progress view is attached, it also says which actions are being
// finished. The second cancels abort: running actions stop at once, and
// the results report them interrupted and count what was left.
type interrupts struct {
	stop, abort context.Context
	release     func()

	mu   sync.Mutex
	prog *views.Progress
}

// applyInterrupts starts listening; release stops.
func (c *cli) applyInterrupts() *interrupts {
	stop, cancelStop := context.WithCancel(context.Background())
	abort, cancelAbort := context.WithCancel(context.Background())
	in := &interrupts{stop: stop, abort: abort}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				n++
				if n == 1 {
					fmt.Fprintln(c.stderr, "\nInterrupt received: no new work starts; running actions finish. Interrupt again to stop at once.")
					cancelStop()
					if prog := in.progress(); prog != nil {
						prog.Interrupted(signalName(s))
					}
					continue
				}
				fmt.Fprintln(c.stderr, "\nSecond interrupt: stopping at once; the results say what was left.")
				cancelAbort()
				return
			}
		}
	}()
	in.release = func() {
		signal.Stop(sigs)
		close(done)
		cancelStop()
		cancelAbort()
	}
	return in
}

// attach gives the listener the progress view, which names the actions
// being finished when the first signal comes (nil detaches it).
func (in *interrupts) attach(prog *views.Progress) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.prog = prog
}

func (in *interrupts) progress() *views.Progress {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.prog
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}
