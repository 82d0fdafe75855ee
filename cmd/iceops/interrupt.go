package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// applyInterrupts is apply's two-stage Ctrl-C (docs/design.md §5.4). The first
// SIGINT or SIGTERM cancels stop: no new table or action starts, and an
// expiry whose commit has landed finishes its deletions (bounded). The
// second cancels abort: those deletions stop at once too, and the results
// count what was left. release stops listening.
func (c *cli) applyInterrupts() (stop, abort context.Context, release func()) {
	stop, cancelStop := context.WithCancel(context.Background())
	abort, cancelAbort := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-sigs:
				n++
				if n == 1 {
					fmt.Fprintln(c.stderr, "\nInterrupt received: no new work starts; deletions of committed expiries finish. Interrupt again to stop at once.")
					cancelStop()
					continue
				}
				fmt.Fprintln(c.stderr, "\nSecond interrupt: stopping at once; the results say what was left.")
				cancelAbort()
				return
			}
		}
	}()
	return stop, abort, func() {
		signal.Stop(sigs)
		close(done)
		cancelStop()
		cancelAbort()
	}
}
