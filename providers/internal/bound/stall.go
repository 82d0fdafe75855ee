package bound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/icewright/icewright/providers/internal/meter"
)

// errStalled is the cause of an attempt cancelled for lack of progress.
var errStalled = errors.New("no progress")

// stallError is a timeout (net.Error-like), which the SDK's retryer
// retries.
type stallError struct {
	timeout time.Duration
	err     error
}

func (e *stallError) Error() string {
	return fmt.Sprintf("storage request made no progress for %s (server stalled or unreachable): %v", e.timeout, e.err)
}
func (e *stallError) Timeout() bool   { return true }
func (e *stallError) Temporary() bool { return true }
func (e *stallError) Unwrap() error   { return e.err }

// StallClient fails an attempt that sends and receives nothing for timeout:
// the clock restarts with every byte of the request body read and every
// read of the response body, and runs only while a read is waiting, so a
// caller that holds an open body without reading is not timed out.
type StallClient struct {
	Inner interface {
		Do(*http.Request) (*http.Response, error)
	}
	Timeout time.Duration
}

// Do sends req as one attempt.
func (c *StallClient) Do(req *http.Request) (*http.Response, error) {
	// The table's breaker (WithBreaker), when the request's context
	// carries one: an attempt is not sent once the store is judged
	// unresponsive, and one in flight is cut when it is.
	br := BreakerOf(req.Context())
	ctx, cancel := context.WithCancelCause(req.Context())
	end, err := br.Begin(cancel)
	if err != nil {
		cancel(nil)
		return nil, err
	}
	// The action's meter, when the context carries one, counts the
	// attempt: it was sent (package meter says how each kind is told).
	call := meter.Of(req.Context()).S3(req)
	timer := time.AfterFunc(c.Timeout, func() { cancel(errStalled) })
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = &progressBody{ReadCloser: req.Body, timer: timer, timeout: c.Timeout, call: call}
	}
	resp, err := c.Inner.Do(req.WithContext(ctx))
	timer.Stop()
	if err != nil {
		err = attemptError(ctx, br, c.Timeout, err)
		end()
		cancel(nil)
		return nil, err
	}
	br.Answered()
	call.Answered(resp.StatusCode)
	resp.Body = &watchedBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, timeout: c.Timeout, br: br, end: end, call: call}
	return resp, nil
}

// attemptError says why an attempt (or a read of its answer) failed, from
// its context's cause: a stall (counted by the breaker) or the breaker's
// cut.
func attemptError(ctx context.Context, br *Breaker, timeout time.Duration, err error) error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errStalled):
		br.Stalled(timeout)
		return &stallError{timeout: timeout, err: err}
	case errors.Is(cause, ErrUnresponsive):
		return fmt.Errorf("%w (cut in flight: %v)", cause, err)
	}
	return err
}

// progressBody restarts the attempt's clock on each read of a request
// body (the transport reads it as the server takes it).
type progressBody struct {
	io.ReadCloser
	timer   *time.Timer
	timeout time.Duration
	call    *meter.S3Call
}

func (b *progressBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.timeout)
	n, err := b.ReadCloser.Read(p)
	b.call.Sent(p[:n])
	return n, err
}

// watchedBody times each read of a response body.
type watchedBody struct {
	io.ReadCloser
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timeout time.Duration
	br      *Breaker
	end     func()
	call    *meter.S3Call
}

func (b *watchedBody) Read(p []byte) (int, error) {
	t := time.AfterFunc(b.timeout, func() { b.cancel(errStalled) })
	n, err := b.ReadCloser.Read(p)
	t.Stop()
	b.call.Received(p[:n])
	if n > 0 {
		b.br.Answered()
	}
	if err != nil && err != io.EOF {
		err = attemptError(b.ctx, b.br, b.timeout, err)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.call.Closed()
	b.cancel(nil)
	b.end()
	return err
}
