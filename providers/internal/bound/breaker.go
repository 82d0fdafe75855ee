package bound

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A store that stops answering must end a destructive action in bounded
// time (issue 32, item 5). The per-attempt timeout and the retries alone do
// not: each request may take storageMaxAttempts timeouts, a sweep or an
// expiry sends many requests, and the lease release after them one more,
// so a paused server kept an apply running for minutes with the default
// timeout. The breaker judges the store unresponsive after StallLimit
// attempts in a row made no progress (no answered attempt between them);
// from then on, for the scope it was made for (one table's work in one
// apply run), no request to storage is sent, the attempts in flight are
// cancelled, and the destructive loops stop starting files (Stop) and say
// why. With 8 moves in flight it trips after one timeout (30s by default);
// one request at a time, after StallLimit timeouts plus the retryer's
// backoff (about 97s). Both end the action well within 2 minutes.
//
// It lives here, in the context, because the S3 client is one per run
// (providers/storage_limits.go) while the judgement is per table: one
// table's prefix stalling must not fail the other tables (the rest of the
// store may still answer), and iceberg-go's blob FS sends every request
// with the context it was opened with, which carries the breaker.

// DefaultStallLimit is how many attempts in a row may make no progress
// before the store is judged unresponsive.
const DefaultStallLimit = 3

// ErrUnresponsive is the cause of everything the breaker stops.
var ErrUnresponsive = errors.New("storage judged unresponsive")

// UnresponsiveError is what a request refused or cut by an open breaker
// fails with. The SDK's retryer does not retry it (RetryableError).
type UnresponsiveError struct {
	Stalls  int           // attempts in a row that made no progress
	Timeout time.Duration // each one's timeout
}

func (e *UnresponsiveError) Error() string {
	return fmt.Sprintf("%v: %d requests in a row made no progress for %s; no further storage request is sent for this table in this run",
		ErrUnresponsive, e.Stalls, e.Timeout)
}
func (e *UnresponsiveError) Unwrap() error { return ErrUnresponsive }

// RetryableError tells the AWS SDK's retryer not to retry.
func (e *UnresponsiveError) RetryableError() bool { return false }

// Breaker counts the attempts in a row that made no progress, and once it
// has tripped refuses every new attempt and cancels those in flight. Its
// methods are safe for concurrent use and do nothing on a nil Breaker.
type Breaker struct {
	limit int

	mu       sync.Mutex
	stalls   int
	tripped  *UnresponsiveError
	inflight map[int]context.CancelCauseFunc
	next     int
}

type breakerKey struct{}
type stallLimitKey struct{}

// WithStallLimit returns ctx carrying n as the stall limit of the breakers
// made from it (n <= 0: DefaultStallLimit).
func WithStallLimit(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, stallLimitKey{}, n)
}

// WithBreaker returns ctx carrying a new breaker, with the stall limit ctx
// carries: every storage request sent with the result (or a context made
// from it) is counted and, once it trips, refused.
func WithBreaker(ctx context.Context) context.Context {
	n, _ := ctx.Value(stallLimitKey{}).(int)
	if n <= 0 {
		n = DefaultStallLimit
	}
	return context.WithValue(ctx, breakerKey{}, &Breaker{limit: n, inflight: map[int]context.CancelCauseFunc{}})
}

// BreakerOf is the breaker ctx carries, or nil.
func BreakerOf(ctx context.Context) *Breaker {
	b, _ := ctx.Value(breakerKey{}).(*Breaker)
	return b
}

// Begin registers an attempt whose context cancel is: it is cancelled with
// the breaker's error if the breaker trips while it runs. It returns the
// function that ends the registration, or the breaker's error when it has
// tripped already (the attempt must not be sent).
func (b *Breaker) Begin(cancel context.CancelCauseFunc) (end func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tripped != nil {
		return nil, b.tripped
	}
	id := b.next
	b.next++
	b.inflight[id] = cancel
	return func() {
		b.mu.Lock()
		delete(b.inflight, id)
		b.mu.Unlock()
	}, nil
}

// Answered records an attempt that got an answer (any status) or a read
// that made progress: the store responds, the count starts again.
func (b *Breaker) Answered() {
	if b == nil {
		return
	}
	b.mu.Lock()
	if b.tripped == nil {
		b.stalls = 0
	}
	b.mu.Unlock()
}

// Stalled records an attempt that made no progress for timeout, and trips
// the breaker at the limit.
func (b *Breaker) Stalled(timeout time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tripped != nil {
		return
	}
	b.stalls++
	if b.stalls < b.limit {
		return
	}
	b.tripped = &UnresponsiveError{Stalls: b.stalls, Timeout: timeout}
	for id, cancel := range b.inflight {
		cancel(b.tripped)
		delete(b.inflight, id)
	}
}

// Err is the breaker's error once it has tripped, else nil.
func (b *Breaker) Err() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tripped == nil {
		return nil
	}
	return b.tripped
}

// Stop says whether a loop of storage requests must start no new one:
// ctx's cause once it is done, or the error of ctx's breaker once it has
// tripped; nil to go on. Every destructive loop (the sweep's deletes and
// moves, the quarantine purge, expiry's deletes) asks it before each file.
func Stop(ctx context.Context) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return BreakerOf(ctx).Err()
}

// Unanswered says whether err means that a request may have reached the
// store without its answer reaching us (a timeout, a cancellation, an
// attempt cut or refused by the breaker after earlier attempts were sent):
// a write or delete that failed so may have happened.
func Unanswered(err error) bool {
	if err == nil {
		return false
	}
	var te interface{ Timeout() bool }
	return errors.Is(err, ErrUnresponsive) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &te) && te.Timeout())
}
