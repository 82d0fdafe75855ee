package objdel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	icegcs "github.com/apache/iceberg-go/io/gocloud/gcs"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
)

// gcsBatch is the most deletes one Delete call takes: the 100 calls a GCS
// JSON batch request may carry, so that callers batch GCS as they would if
// the batch endpoint were used.
const gcsBatch = 100

// gcsConcurrency is how many single deletes run at once within a batch.
// The Go SDK (cloud.google.com/go/storage, checked at v1.66.0) has no batch
// API: GCS's multipart batch endpoint is reachable only by hand-built
// requests, which the SDK's retries, auth and emulator handling would not
// cover. So a GCS batch is 100 single DELETE requests, this many at a time:
// fewer round trips in flight than a real batch, the same per-object
// outcomes.
const gcsConcurrency = 8

// gcsStore deletes objects of one GCS bucket.
type gcsStore struct {
	bucket string
	h      *storage.BucketHandle
	io     *viaIO // for keys gocloud escapes
}

// openGCS opens the deleter of loc's GCS bucket with a client built as
// iceberg-go's GCS IO builds its own (the same endpoint override,
// gcs.service.host or gcs.endpoint, and the same credential properties), so
// it reaches the bucket the table's IO reaches.
func openGCS(ctx context.Context, props map[string]string, loc string) (Store, error) {
	if !anyProperty(props, "gcs.") {
		return nil, fmt.Errorf("%w: no gcs.* properties to open the bucket with", ErrNoBatchAPI)
	}
	bucket := authority(loc)
	if bucket == "" {
		return nil, fmt.Errorf("gcs location %q: no bucket", loc)
	}
	creds, err := gcsCredentials(ctx, props)
	if err != nil {
		return nil, err
	}
	var hc *gcp.HTTPClient
	if creds == nil {
		hc = gcp.NewAnonymousHTTPClient(gcp.DefaultTransport())
	} else if hc, err = gcp.NewHTTPClient(gcp.DefaultTransport(), gcp.CredentialsTokenSource(creds)); err != nil {
		return nil, fmt.Errorf("gcs client: %w", err)
	}
	opts := append([]option.ClientOption{option.WithHTTPClient(&hc.Client)}, icegcs.ParseGCSConfig(props).ClientOptions...)
	c, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("gcs client: %w", err)
	}
	return &gcsStore{bucket: bucket, h: c.Bucket(bucket), io: &viaIO{props: props, root: loc}}, nil
}

func (s *gcsStore) MaxBatch() int { return gcsBatch }

func (s *gcsStore) Delete(ctx context.Context, locs []string) []error {
	errs := make([]error, len(locs))
	if len(locs) > gcsBatch {
		return fill(errs, fmt.Errorf("gcs batch of %d locations, more than %d", len(locs), gcsBatch))
	}
	sem := make(chan struct{}, gcsConcurrency)
	var wg sync.WaitGroup
	for i, loc := range locs {
		key, err := objectKey(loc, s.bucket, "gs")
		if err != nil {
			errs[i] = err
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if gocloudEscapes(key, false) {
				errs[i] = s.io.remove(ctx, loc)
				return
			}
			err := s.h.Object(key).Delete(ctx)
			if err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
				errs[i] = fmt.Errorf("delete %s: %w", loc, err)
			}
		}()
	}
	wg.Wait()
	return errs
}

// objectKey returns the key of loc in bucket (a bucket name, or an Azure
// container@host), or an error when loc is not an object of that bucket: a
// Store deletes in its own bucket only. The key is the location's text
// after bucket/, never unescaped (a%20b is the key "a%20b", c?x the key
// "c?x"), by iceberg-go's own parser, so that it names the object the
// table's IO wrote and reads, never another one.
func objectKey(loc, bucket string, schemes ...string) (string, error) {
	ol, err := blobfs.DefaultObjectLocationExtractor(bucket, schemes...)(loc)
	if err != nil {
		return "", fmt.Errorf("location %q: %w", loc, err)
	}
	if ol.Authority() == "" {
		return "", fmt.Errorf("location %q is not a full location in %s", loc, bucket)
	}
	return ol.Key(), nil
}

// anyProperty reports whether props has a key starting with prefix. A
// Store opened without any of its store's properties could reach another
// endpoint, or use other credentials, than the IO the table was opened
// with (whose properties the caller did not pass); it steps aside
// (ErrNoBatchAPI) and the table's IO deletes.
func anyProperty(props map[string]string, prefix string) bool {
	for k := range props {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// authority is the text between loc's "scheme://" and the first of "/?#"
// after it, as iceberg-go reads it; "" when there is none.
func authority(loc string) string {
	_, rest, ok := strings.Cut(loc, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// gcsCredentials resolves the credentials from the IO properties in the
// order iceberg-go v0.7.0's GCS IO does (its resolver is unexported):
// gcs.no-auth, then a vended gcs.oauth2.token, then gcs.jsonkey or
// gcs.keypath (of type gcs.credtype), then Application Default Credentials.
// nil means anonymous.
func gcsCredentials(ctx context.Context, props map[string]string) (*google.Credentials, error) {
	if noAuth, err := strconv.ParseBool(props[iceio.GCSNoAuth]); err == nil && noAuth {
		return nil, nil
	}
	if tok := props[iceio.GCSOAuthToken]; tok != "" {
		t := &oauth2.Token{AccessToken: tok}
		if ms, err := strconv.ParseInt(props[iceio.GCSOAuthExpiresAt], 10, 64); err == nil {
			t.Expiry = time.UnixMilli(ms)
		}
		return &google.Credentials{TokenSource: oauth2.StaticTokenSource(t)}, nil
	}
	credType := google.ServiceAccount
	if v := props[iceio.GCSCredType]; v != "" {
		credType = google.CredentialsType(v)
	}
	const scope = "https://www.googleapis.com/auth/devstorage.read_write"
	key, source := []byte(props[iceio.GCSJSONKey]), iceio.GCSJSONKey
	if len(key) == 0 {
		if path := props[iceio.GCSKeyPath]; path != "" {
			var err error
			if key, err = os.ReadFile(path); err != nil {
				return nil, fmt.Errorf("gcs: reading %s %q: %w", iceio.GCSKeyPath, path, err)
			}
			source = iceio.GCSKeyPath
		}
	}
	if len(key) > 0 {
		creds, err := google.CredentialsFromJSONWithType(ctx, key, credType, scope)
		if err != nil {
			return nil, fmt.Errorf("gcs: parsing %s: %w", source, err)
		}
		return creds, nil
	}
	// Without credentials of its own the Store steps aside (ErrNoBatchAPI):
	// the table's IO may hold credentials the catalog vended with the
	// table, which these properties lack, and it deletes one at a time.
	creds, err := gcp.DefaultCredentials(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: gcs: no credentials in the properties and no Application Default Credentials: %w", ErrNoBatchAPI, err)
	}
	if creds == nil {
		return nil, fmt.Errorf("%w: gcs: no credentials in the properties and no Application Default Credentials", ErrNoBatchAPI)
	}
	return creds, nil
}
