package bound

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBreakerTripsAfterStallsInARow: StallLimit stalls with no answer
// between them trip it; an answer starts the count again; once tripped it
// refuses new attempts, cuts those in flight, and Stop reports it.
func TestBreakerTripsAfterStallsInARow(t *testing.T) {
	ctx := WithBreaker(WithStallLimit(context.Background(), 3))
	b := BreakerOf(ctx)
	if b == nil {
		t.Fatal("no breaker in the context")
	}
	b.Stalled(time.Second)
	b.Stalled(time.Second)
	b.Answered() // the store answered in between: not in a row
	b.Stalled(time.Second)
	b.Stalled(time.Second)
	if err := Stop(ctx); err != nil {
		t.Fatalf("tripped after 2 stalls in a row: %v", err)
	}

	inflight, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	end, err := b.Begin(cancel)
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	b.Stalled(time.Second) // the third in a row
	err = Stop(ctx)
	var ue *UnresponsiveError
	if !errors.As(err, &ue) || ue.Stalls != 3 || !errors.Is(err, ErrUnresponsive) {
		t.Fatalf("Stop after 3 stalls in a row = %v", err)
	}
	if !errors.Is(context.Cause(inflight), ErrUnresponsive) {
		t.Errorf("the attempt in flight was not cut: %v", context.Cause(inflight))
	}
	if _, err := b.Begin(func(error) {}); !errors.Is(err, ErrUnresponsive) {
		t.Errorf("a new attempt was let through: %v", err)
	}
	b.Answered() // a late answer does not close it again
	if Stop(ctx) == nil {
		t.Error("an answer after the trip closed the breaker")
	}
	if ue.RetryableError() {
		t.Error("the SDK would retry a refused attempt")
	}
	if !Unanswered(err) {
		t.Error("a cut request is not reported as unanswered")
	}
}

// TestBreakerDefaultsAndNil: no breaker means nothing is stopped; a
// breaker made without a limit uses DefaultStallLimit; Stop reports a
// cancelled context's cause first.
func TestBreakerDefaultsAndNil(t *testing.T) {
	var none *Breaker
	none.Stalled(time.Second)
	if _, err := none.Begin(func(error) {}); err != nil || none.Err() != nil || Stop(context.Background()) != nil {
		t.Fatal("a missing breaker stops something")
	}
	ctx := WithBreaker(context.Background())
	for i := 1; i < DefaultStallLimit; i++ {
		BreakerOf(ctx).Stalled(time.Second)
	}
	if Stop(ctx) != nil {
		t.Fatalf("tripped before %d stalls", DefaultStallLimit)
	}
	BreakerOf(ctx).Stalled(time.Second)
	if Stop(ctx) == nil {
		t.Fatalf("not tripped after %d stalls", DefaultStallLimit)
	}
	why := errors.New("interrupted")
	cctx, cancel := context.WithCancelCause(ctx)
	cancel(why)
	if err := Stop(cctx); !errors.Is(err, why) {
		t.Errorf("Stop of a cancelled context = %v, want its cause", err)
	}
}
