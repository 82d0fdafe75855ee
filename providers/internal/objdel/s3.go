package objdel

import (
	"context"
	"fmt"
	"strings"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3:// for openS3
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/objlist"
)

// s3MaxBatch is the most keys one DeleteObjects request takes (diff's,
// whose estimates count the batches).
const s3MaxBatch = diff.S3DeleteBatch

// s3Attempts bounds the tries of one DeleteObjects request (the SDK's
// adaptive retryer: backoff with jitter on 5xx, 503 SlowDown and
// throttling, and a client-side rate that drops while the store throttles)
// and the rounds of keys the store answered with a retryable per-key error.
const s3Attempts = 5

// s3KeyRetryCodes are per-key errors of a DeleteObjects answer worth
// sending again: the store was busy, the key is fine.
var s3KeyRetryCodes = map[string]bool{"SlowDown": true, "InternalError": true, "ServiceUnavailable": true, "RequestTimeout": true}

// openS3 opens loc's bucket with iceberg-go's own S3 IO from props (and
// the aws.Config the context carries, as every table's IO), so endpoint,
// addressing, credentials and the HTTP client are the ones the table's
// reads and writes use.
func openS3(ctx context.Context, props map[string]string, loc string) (Store, error) {
	fsys, err := iceio.LoadFS(ctx, props, loc)
	if err != nil {
		return nil, fmt.Errorf("open S3 storage of %s: %w", loc, err)
	}
	st, ok := s3FromIO(fsys, loc)
	if !ok {
		return nil, fmt.Errorf("open S3 storage of %s: %w", loc, ErrNoBatchAPI)
	}
	return st, nil
}

// s3FromIO is the Store over the S3 client inside an iceberg-go S3 IO.
func s3FromIO(fsys iceio.IO, loc string) (Store, bool) {
	client, ok := objlist.S3Client(fsys)
	if !ok {
		return nil, false
	}
	_, authority, _ := splitLoc(loc)
	if authority == "" {
		return nil, false
	}
	return &s3Store{
		client: client,
		bucket: authority,
		remove: fsys.Remove,
		retryer: retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
			o.StandardOptions = append(o.StandardOptions, func(so *retry.StandardOptions) {
				so.MaxAttempts = s3Attempts
				so.MaxBackoff = 10 * time.Second
			})
		}),
		pause: 250 * time.Millisecond,
	}, true
}

type s3Store struct {
	client  *s3.Client
	bucket  string
	remove  func(string) error // the table's IO, for keys it would escape
	retryer aws.Retryer        // shared: its rate follows the store's throttling
	pause   time.Duration      // first wait before re-sending keys a store was busy for
}

func (*s3Store) MaxBatch() int { return s3MaxBatch }

func (s *s3Store) Delete(ctx context.Context, locs []string) []error {
	errs := make([]error, len(locs))
	byKey := map[string][]int{}
	var keys []string
	for i, l := range locs {
		_, authority, key := splitLoc(l)
		switch {
		case authority != s.bucket:
			errs[i] = fmt.Errorf("%s is not in bucket %s", l, s.bucket)
		case key == "":
			errs[i] = fmt.Errorf("%s names no object", l)
		case escapedKey(key):
			// The IO stores such a key escaped; it deletes it under the
			// name it wrote.
			if err := OneByOne(s.remove).Delete(ctx, []string{l})[0]; err != nil {
				errs[i] = err
			}
		default:
			if _, seen := byKey[key]; !seen {
				keys = append(keys, key)
			}
			byKey[key] = append(byKey[key], i)
		}
	}
	// A batch is one request: once sent, ctx does not cut it (its
	// attempts end within the HTTP client's bounds and the breaker's).
	send := context.WithoutCancel(ctx)
	wait := s.pause
	for round := 1; len(keys) > 0; round++ {
		if err := bound.BreakerOf(ctx).Err(); err != nil {
			for _, k := range keys {
				for _, i := range byKey[k] {
					if errs[i] == nil {
						errs[i] = notSent{err}
					}
				}
			}
			break
		}
		failed := s.deleteObjects(send, keys)
		var again []string
		for _, k := range keys {
			err, busy := failed[k].err, failed[k].busy
			if busy && round < s3Attempts {
				again = append(again, k)
				for _, i := range byKey[k] {
					errs[i] = err // unless it goes on the next round
				}
				continue
			}
			for _, i := range byKey[k] {
				errs[i] = err
			}
		}
		if keys = again; len(keys) > 0 {
			time.Sleep(wait)
			wait *= 2
		}
	}
	return errs
}

type keyErr struct {
	err  error
	busy bool
}

// deleteObjects sends one DeleteObjects request in quiet mode (the answer
// names only the keys that failed) and returns each key's failure.
func (s *s3Store) deleteObjects(ctx context.Context, keys []string) map[string]keyErr {
	objs := make([]types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		objs[i] = types.ObjectIdentifier{Key: aws.String(k)}
	}
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: aws.String(s.bucket),
		Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)},
	}, func(o *s3.Options) { o.Retryer = s.retryer })
	failed := map[string]keyErr{}
	if err != nil {
		err = fmt.Errorf("DeleteObjects of %d keys in %s: %w", len(keys), s.bucket, err)
		for _, k := range keys {
			failed[k] = keyErr{err: err}
		}
		return failed
	}
	for _, e := range out.Errors {
		code := aws.ToString(e.Code)
		if code == "NoSuchKey" {
			continue // gone: what a delete wants
		}
		failed[aws.ToString(e.Key)] = keyErr{
			err:  fmt.Errorf("DeleteObjects in %s: %s: %s", s.bucket, code, aws.ToString(e.Message)),
			busy: s3KeyRetryCodes[code],
		}
	}
	return failed
}

// splitLoc splits scheme://authority/key without unescaping the key, as
// iceberg-go's blob IO does (object names are opaque strings).
func splitLoc(loc string) (scheme, authority, key string) {
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		return "", "", loc
	}
	authority, key, _ = strings.Cut(rest, "/")
	return scheme, authority, key
}

// escapedKey reports a key that gocloud's S3 driver stores escaped (a
// control character, or "../"): deleting it by its raw name would remove
// nothing and look like success.
func escapedKey(key string) bool {
	return strings.Contains(key, "../") || strings.IndexFunc(key, func(r rune) bool { return r < 32 }) >= 0
}
