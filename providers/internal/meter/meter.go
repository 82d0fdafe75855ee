// Package meter counts what an action really did to storage (issue 45,
// item 4): requests by kind, bytes read and written, files read, written
// and deleted. One Meter per action rides in the context; the places every
// request passes through feed it, each store at one place only, so that
// nothing is counted twice (docs/cost.md, "Actuals"):
//   - S3: the session's HTTP client (bound.StallClient calls S3), which
//     every request of iceberg-go's S3 IO and of objlist and objdel sends
//     through, each attempt a request;
//   - local storage: iceberg-go's IO for file:// and bare paths (LocalIO,
//     registered in place of iceberg-go's LocalFS), the local deletes of
//     objdel (LocalIO too) and the orphan sweep's own directory reads;
//   - GCS and Azure: nowhere yet (iceberg-go v0.7.0 builds their HTTP
//     clients on the process defaults and offers no hook): their actions
//     have no actual.
//
// A nil *Meter counts nothing: every method may be called on it.
package meter

import (
	"context"
	"sync"
	"sync/atomic"
)

// Kind is a kind of request, as diff.Requests counts them.
type Kind int

// The request kinds.
const (
	List Kind = iota
	Get
	Head
	Put
	Delete
	BatchDelete
	nKinds
)

// Counts is what a Meter counted.
type Counts struct {
	Requests     [nKinds]int64 // indexed by Kind
	BytesRead    int64
	BytesWritten int64
	FilesRead    int64
	FilesWritten int64
	FilesDeleted int64
}

// Meter counts one action's storage work. Safe for concurrent use.
type Meter struct {
	req          [nKinds]atomic.Int64
	bytesRead    atomic.Int64
	bytesWritten atomic.Int64
	filesWritten atomic.Int64
	filesDeleted atomic.Int64

	mu   sync.Mutex
	read map[string]struct{} // objects read: ranged GETs of one file count it once
}

// New returns an empty Meter.
func New() *Meter { return &Meter{read: map[string]struct{}{}} }

type key struct{}

// With returns ctx carrying m: what is sent with it (or a context made from
// it) is counted in m.
func With(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, key{}, m)
}

// Of is the Meter ctx carries, or nil.
func Of(ctx context.Context) *Meter {
	m, _ := ctx.Value(key{}).(*Meter)
	return m
}

type apartKey struct{}

// WithApart returns ctx carrying m as the meter of work that belongs to
// the run rather than to the action that triggers it (other tables'
// references): Apart switches a context to it.
func WithApart(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, apartKey{}, m)
}

// Apart is ctx counting in the run's meter (WithApart) instead of the
// action's, or ctx itself when it carries none.
func Apart(ctx context.Context) context.Context {
	if m, _ := ctx.Value(apartKey{}).(*Meter); m != nil {
		return With(ctx, m)
	}
	return ctx
}

// Request counts one request of kind k.
func (m *Meter) Request(k Kind) {
	if m != nil {
		m.req[k].Add(1)
	}
}

// Read counts n bytes of an object read.
func (m *Meter) Read(n int64) {
	if m != nil && n > 0 {
		m.bytesRead.Add(n)
	}
}

// Wrote counts n bytes of an object written.
func (m *Meter) Wrote(n int64) {
	if m != nil && n > 0 {
		m.bytesWritten.Add(n)
	}
}

// FileRead counts the object name as read, once however many requests
// read it.
func (m *Meter) FileRead(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.read[name] = struct{}{}
	m.mu.Unlock()
}

// FilesWritten counts n objects written (created or replaced).
func (m *Meter) FilesWritten(n int64) {
	if m != nil && n > 0 {
		m.filesWritten.Add(n)
	}
}

// FilesDeleted counts n objects deleted.
func (m *Meter) FilesDeleted(n int64) {
	if m != nil && n > 0 {
		m.filesDeleted.Add(n)
	}
}

// Counts is what m counted so far (zero for a nil Meter).
func (m *Meter) Counts() Counts {
	var c Counts
	if m == nil {
		return c
	}
	for k := range c.Requests {
		c.Requests[k] = m.req[k].Load()
	}
	c.BytesRead = m.bytesRead.Load()
	c.BytesWritten = m.bytesWritten.Load()
	c.FilesWritten = m.filesWritten.Load()
	c.FilesDeleted = m.filesDeleted.Load()
	m.mu.Lock()
	c.FilesRead = int64(len(m.read))
	m.mu.Unlock()
	return c
}
