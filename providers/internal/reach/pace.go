package reach

import (
	"context"
	"time"
)

// DefaultPaceEvery is how many manifest entries a paced walk reads between
// pauses (the production design this product grew from: 100 ms after every
// 1,500 files read from manifests).
const DefaultPaceEvery = 1500

// Pace slows a walk's manifest reads so that shared storage is not
// overwhelmed: after every Every entries read (DefaultPaceEvery when 0),
// the walk pauses for Pause before it reads on. The decoding workers run
// ahead of the walk by a few bounded batches only, so the pause holds back
// the manifest reads themselves. A zero Pause paces nothing.
type Pace struct {
	Every int
	Pause time.Duration
	// Sleep waits d or until ctx is done (nil: a timer); tests count
	// the pauses with their own.
	Sleep func(ctx context.Context, d time.Duration)
}

type paceKey struct{}

// WithPace returns ctx carrying p: every Walk with the result is paced.
// It rides in the context, as the storage's deadlines and breaker do
// (bound), since the pace belongs to the storage a table lives on and the
// walks of one table's plan and apply are many, several packages deep.
func WithPace(ctx context.Context, p Pace) context.Context {
	if p.Pause <= 0 {
		return ctx
	}
	return context.WithValue(ctx, paceKey{}, p)
}

// pacer counts the entries one walk reads and pauses as its Pace says.
type pacer struct {
	p    Pace
	read int
}

func newPacer(ctx context.Context) *pacer {
	p, ok := ctx.Value(paceKey{}).(Pace)
	if !ok || p.Pause <= 0 {
		return nil
	}
	if p.Every <= 0 {
		p.Every = DefaultPaceEvery
	}
	if p.Sleep == nil {
		p.Sleep = func(ctx context.Context, d time.Duration) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
			case <-t.C:
			}
		}
	}
	return &pacer{p: p}
}

// entry counts one entry read, pausing after every Every.
func (p *pacer) entry(ctx context.Context) {
	if p == nil {
		return
	}
	if p.read++; p.read%p.p.Every == 0 {
		p.p.Sleep(ctx, p.p.Pause)
	}
}
