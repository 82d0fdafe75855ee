// Package objlist lists a prefix of an object store fanned out by its
// "directories" (the orphan sweep's listing, issue #30): the prefix is
// split at '/' down to a few levels, the leaves are listed with flat
// paginated ListObjectsV2 calls with bounded concurrency, and each page is
// retried by the SDK's retryer. A page that fails after its retries fails
// the whole listing: a partial listing never looks complete.
//
// It reaches S3 through the client inside iceberg-go's S3 IO, so endpoint,
// credentials and the HTTP client (with the session's bounds) are the
// table's. It imports nothing of ours.
package objlist

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Client is the S3 client inside an iceberg-go S3 IO, if fsys is one.
func S3Client(fsys iceio.IO) (*s3.Client, bool) {
	b, ok := fsys.(*blobfs.FileIO)
	if !ok {
		return nil, false
	}
	var c *s3.Client
	if !b.Bucket.As(&c) || c == nil {
		return nil, false
	}
	return c, true
}

// Object is one listed object.
type Object struct {
	Loc     string // scheme://bucket/key, in root's scheme
	Size    int64
	ModTime time.Time
}

// Settings bound a listing: Concurrency listings in flight (default 8),
// Depth levels of '/' split into prefixes before the leaves are listed
// flat (default 2: <root>/data/<partition>/).
type Settings struct {
	Concurrency int
	Depth       int
}

// List calls fn for every object under root (a directory: root + "/"),
// serialised, in no particular order. It reports false when fsys is not
// an S3 IO (the caller lists another way). Keys ending in '/' (directory
// markers) are not objects.
func List(ctx context.Context, fsys iceio.IO, root string, set Settings, fn func(Object) error) (bool, error) {
	c, ok := S3Client(fsys)
	if !ok {
		return false, nil
	}
	scheme, rest, ok := strings.Cut(root, "://")
	if !ok {
		return false, nil
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	l := &lister{c: c, bucket: bucket, base: scheme + "://" + bucket + "/", fn: fn}
	conc, depth := set.Concurrency, set.Depth
	if conc <= 0 {
		conc = 8
	}
	if depth <= 0 {
		depth = 2
	}
	return true, l.run(ctx, prefix, conc, depth)
}

type lister struct {
	c      *s3.Client
	bucket string
	base   string
	mu     sync.Mutex
	fn     func(Object) error
}

func (l *lister) emit(objs []Object) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range objs {
		if err := l.fn(o); err != nil {
			return err
		}
	}
	return nil
}

// run splits prefix into its sub-prefixes depth levels down (the objects
// found on the way are emitted), then lists the leaves flat, conc at a
// time. The first error cancels the rest and is returned.
func (l *lister) run(ctx context.Context, prefix string, conc, depth int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	leaves := []string{prefix}
	for range depth {
		var next []string
		for _, p := range leaves {
			subs, err := l.list(ctx, p, "/")
			if err != nil {
				return err
			}
			next = append(next, subs...)
		}
		if len(next) == 0 {
			return nil
		}
		leaves = next
	}
	var (
		wg    sync.WaitGroup
		sem   = make(chan struct{}, conc)
		first error
		once  sync.Once
	)
	for _, p := range leaves {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := l.list(ctx, p, ""); err != nil {
				once.Do(func() { first = err; cancel(err) })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return context.Cause(ctx)
}

// list pages through prefix (with delimiter: one level, returning the
// sub-prefixes), emitting each page's objects.
func (l *lister) list(ctx context.Context, prefix, delim string) ([]string, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(l.bucket), Prefix: aws.String(prefix)}
	if delim != "" {
		in.Delimiter = aws.String(delim)
	}
	var subs []string
	p := s3.NewListObjectsV2Paginator(l.c, in)
	for page := 1; p.HasMorePages(); page++ {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list s3://%s/%s (page %d): %w", l.bucket, prefix, page, err)
		}
		objs := make([]Object, 0, len(out.Contents))
		for _, o := range out.Contents {
			k := aws.ToString(o.Key)
			if strings.HasSuffix(k, "/") {
				continue
			}
			objs = append(objs, Object{Loc: l.base + k, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
		if err := l.emit(objs); err != nil {
			return nil, err
		}
		for _, cp := range out.CommonPrefixes {
			subs = append(subs, aws.ToString(cp.Prefix))
		}
	}
	return subs, nil
}
