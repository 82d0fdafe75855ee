// Package objdel is the one path by which icewright deletes objects from
// storage in batches (issue #30): expiry, the orphan sweep, the quarantine
// purge and the cleanup of a failed rewrite's staged files all hand it the
// locations to delete, and each store deletes them with its own bulk API
// (S3 DeleteObjects, the GCS and Azure batch APIs, bounded concurrency on a
// local disk).
//
// It decides nothing: which files may be deleted is decided above it
// (§5.5 of docs/design.md). It reports one outcome per location so that a
// partial batch failure names every file left.
package objdel

import (
	"context"
	"errors"
	"net/url"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// Store deletes objects of one bucket (container, local root) in batches.
type Store interface {
	// MaxBatch is the most locations one Delete call takes.
	MaxBatch() int
	// Delete removes the objects at locs, full locations of the store's
	// bucket as the table names them (s3://b/k, gs://b/k, abfs://..., or
	// file:///p), at most MaxBatch of them. It returns one error per
	// location, in order: nil when the object is gone (deleted now, or
	// already absent). Once the store is judged unresponsive (bound) a
	// store sends nothing more: the locations it did not send get
	// ErrNotSent. A request already sent is not cut by ctx.
	Delete(ctx context.Context, locs []string) []error
}

// Opener opens the Store for the bucket of loc, with the IO properties
// (endpoint, region, credentials) the table's iceberg-go IO was opened with.
type Opener func(ctx context.Context, props map[string]string, loc string) (Store, error)

// ErrNoBatchAPI is what an Opener returns for a store whose batch API is not
// available; the caller then deletes one object at a time through the
// table's IO.
var ErrNoBatchAPI = errors.New("no batch delete for this store")

// ErrNotSent marks the outcome of a location whose delete was never sent
// (the store was judged unresponsive before its turn): it is still in
// place, not in a place unknown. errors.Is(err, ErrNotSent) tells it; its
// text is the cause's.
var ErrNotSent = errors.New("not sent")

type notSent struct{ cause error }

func (e notSent) Error() string        { return e.cause.Error() }
func (e notSent) Unwrap() error        { return e.cause }
func (e notSent) Is(target error) bool { return target == ErrNotSent }

// Open returns the Store for loc's scheme.
func Open(ctx context.Context, props map[string]string, loc string) (Store, error) {
	switch scheme(loc) {
	case "s3", "s3a", "s3n":
		return openS3(ctx, props, loc)
	case "file", "":
		return openLocal(ctx, props, loc)
	case "gs":
		return openGCS(ctx, props, loc)
	case "abfs", "abfss", "wasb", "wasbs", "azure": // azure: store.Storage's family key
		return openAzure(ctx, props, loc)
	}
	return nil, ErrNoBatchAPI
}

// ForIO returns the Store that deletes loc's objects for a table whose
// storage is fsys (the IO iceberg-go opened, with its credentials, vended
// or not): S3 through that IO's own client, a local disk directly, GCS and
// Azure through Open with props, and any other store one object at a time
// through fsys. It fails only when a store's batch API cannot be opened.
func ForIO(ctx context.Context, fsys iceio.IO, props map[string]string, loc string) (Store, error) {
	switch scheme(loc) {
	case "s3", "s3a", "s3n":
		if st, ok := s3FromIO(fsys, loc); ok {
			return st, nil
		}
	case "file", "":
		return openLocal(ctx, props, loc)
	default:
		st, err := Open(ctx, props, loc)
		if err == nil {
			return st, nil
		}
		if !errors.Is(err, ErrNoBatchAPI) {
			return nil, err
		}
	}
	return OneByOne(fsys.Remove), nil
}

func scheme(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Scheme == "" {
		return ""
	}
	return strings.ToLower(u.Scheme)
}
