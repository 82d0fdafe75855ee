// Package bound gives every catalog call a deadline and every catalog read
// bounded retries (docs/design.md §5.4, issue 17).
//
// Why a package of its own: iceberg-go's catalogs honour the context of each
// call, but build their HTTP client themselves (the REST catalog takes a
// transport only through options that its property registry, which icewright
// opens catalogs with, cannot pass), and a table's transaction commits
// through the catalog the table was loaded from, not through any wrapper of
// ours. So the bound travels in the context, set once per run by the
// session (providers.Session.WithStorageLimits), and every call site in
// providers and providers/compaction takes its context from here.
package bound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
)

// Default is the bound of one catalog call when the run set none.
const Default = 2 * time.Minute

// Attempts is how many times a catalog read is tried. Each attempt may
// take the whole bound, so a catalog that stalls fails its table after
// Attempts bounds.
const Attempts = 3

type key struct{}

// With returns ctx carrying d as the bound of one catalog call (d <= 0:
// Default).
func With(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, key{}, d)
}

// Of is the bound ctx carries.
func Of(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(key{}).(time.Duration); ok && d > 0 {
		return d
	}
	return Default
}

// ErrDeadline is the cause of a call stopped by its bound.
var ErrDeadline = errors.New("the catalog did not answer in time")

// deadlineError is the cause of a call stopped by its bound d.
type deadlineError struct{ d time.Duration }

func (e *deadlineError) Error() string        { return fmt.Sprintf("%v (%s)", ErrDeadline, e.d) }
func (e *deadlineError) Is(target error) bool { return target == ErrDeadline }

// Call is the context of one catalog call: ctx, bounded.
func Call(ctx context.Context) (context.Context, context.CancelFunc) {
	d := Of(ctx)
	return context.WithTimeoutCause(ctx, d, &deadlineError{d})
}

// Commit is the context of a commit once sent: not cancelled with ctx (an
// interrupt lets a sent commit finish or fail cleanly, never abandons it
// halfway), yet bounded, so a catalog that stops answering fails the commit
// (its outcome unknown) instead of hanging the run.
func Commit(ctx context.Context) (context.Context, context.CancelFunc) {
	return Call(context.WithoutCancel(ctx))
}

// Read runs fn, a catalog read that may be repeated, with each attempt
// bounded by Call, up to Attempts times while it fails transiently (a 5xx
// answer, a timeout, a refused or reset connection), with exponential
// backoff. It stops at once when ctx ends or the error is not transient.
// The error it returns names the last HTTP exchange of the last attempt
// (Explain), when the catalog speaks HTTP through Transport.
func Read(ctx context.Context, fn func(context.Context) error) error {
	var err error
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := Call(ctx)
		actx, last := Recording(actx)
		err = fn(actx)
		timedOut := errors.Is(context.Cause(actx), ErrDeadline)
		cancel()
		if err == nil || ctx.Err() != nil || attempt == Attempts || !(timedOut || Transient(err)) {
			if err != nil && timedOut {
				err = fmt.Errorf("%w: %w", context.Cause(actx), err)
			}
			return Explain(err, last())
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// Transient says whether err may pass on its own: a server error or
// unavailability answer, a timeout, a refused, reset or cut connection.
func Transient(err error) bool {
	var ne net.Error
	switch {
	case err == nil:
		return false
	case errors.Is(err, rest.ErrCommitStateUnknown), errors.Is(err, rest.ErrCommitFailed):
		return false // a commit's answer: never a read to repeat
	case errors.Is(err, rest.ErrServiceUnavailable), errors.Is(err, rest.ErrServerError):
		return true
	case errors.Is(err, rest.ErrRESTError) && strings.Contains(err.Error(), "failed to decode error response"):
		// An error page that is not the catalog's JSON comes from a gateway
		// or proxy in front of it, typically while the catalog is down or
		// restarting (502, 503, 504). iceberg-go keeps that answer's status
		// in an unexported field, so the page's form is what tells; a read
		// repeated a few times is harmless whatever the status was.
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	}
	return false
}
