package bound

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
)

func TestReadRetriesTransientOnly(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		calls int // calls made when every attempt fails with err
	}{
		{"503", fmt.Errorf("load: %w", rest.ErrServiceUnavailable), Attempts},
		{"500", rest.ErrServerError, Attempts},
		{"gateway page", fmt.Errorf("%w: failed to decode error response: invalid character '<'", rest.ErrRESTError), Attempts},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), Attempts},
		{"not found", rest.ErrRESTError, 1},
		{"forbidden", rest.ErrForbidden, 1},
		{"commit unknown", rest.ErrCommitStateUnknown, 1},
		{"plain", errors.New("bad metadata"), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := Read(With(context.Background(), time.Second), func(context.Context) error {
				calls++
				return c.err
			})
			if !errors.Is(err, c.err) {
				t.Errorf("Read returned %v, want %v", err, c.err)
			}
			if calls != c.calls {
				t.Errorf("%d calls, want %d", calls, c.calls)
			}
		})
	}
}

func TestReadBoundsEachAttempt(t *testing.T) {
	calls := 0
	start := time.Now()
	err := Read(With(context.Background(), 50*time.Millisecond), func(ctx context.Context) error {
		calls++
		if calls == Attempts {
			return nil
		}
		<-ctx.Done() // a call that never answers
		return ctx.Err()
	})
	if err != nil || calls != Attempts {
		t.Fatalf("stalled attempts then an answer: err %v after %d calls", err, calls)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	err = Read(With(context.Background(), 20*time.Millisecond), func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, ErrDeadline) {
		t.Errorf("a read that never answers returned %v, want ErrDeadline", err)
	}
}

func TestCommitIgnoresCancelButNotBound(t *testing.T) {
	parent, cancel := context.WithCancel(With(context.Background(), 30*time.Millisecond))
	ctx, done := Commit(parent)
	defer done()
	cancel()
	if ctx.Err() != nil {
		t.Fatal("a sent commit was cancelled with its parent")
	}
	select {
	case <-ctx.Done():
		if !errors.Is(context.Cause(ctx), ErrDeadline) {
			t.Errorf("cause %v", context.Cause(ctx))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a commit context had no bound")
	}
}
