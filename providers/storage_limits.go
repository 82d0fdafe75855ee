package providers

import (
	"context"
	"fmt"
	stdlog "log"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/utils"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go/logging"

	"github.com/icewright/icewright/providers/internal/bound"
)

// Every storage and catalog request has a deadline and bounded retries
// (issue 17): a server that stops answering fails the table it holds, within
// a bounded time, and the others go on.
//
// How, for S3: iceberg-go v0.7.0 builds one S3 client per FS it opens, from
// the table's properties, with the SDK's default HTTP client (no request
// timeout at all) and the SDK's default retryer. It offers two hooks: the
// s3.connect-timeout property (connecting only: a server that accepts and
// then stalls still hangs) and an aws.Config in the context
// (utils.WithAwsConfig), which replaces the one it would parse from the
// properties. The properties' region, endpoint and static keys still
// override that config (so vended credentials keep working). icewright uses the
// context hook: the config is parsed by iceberg-go's own ParseAWSConfig from
// the catalogs' properties, and gets
//   - an HTTP client that fails an attempt after RequestTimeout without
//     progress (no byte sent or received): a stalled server, a lost
//     connection; a large, slow but moving transfer is not cut;
//   - the SDK's standard retryer with storageMaxAttempts attempts and
//     exponential backoff with jitter, which retries 5xx answers, throttling
//     (503 SlowDown) and those timeouts.
//
// The blob FS of iceberg-go keeps the context it was opened with for all its
// requests, so a per-request deadline cannot come from the context: it is
// the HTTP client's.
//
// Catalog calls get the bound as a context deadline, which iceberg-go's
// catalogs honour per call: reads (loads, listings) are retried while they
// fail transiently, commits never, and a commit once sent is not cancelled
// by an interrupt but still ends at its bound (package bound).

// defaultRequestTimeout bounds one attempt of a storage request without
// progress, and one catalog call.
const defaultRequestTimeout = 30 * time.Second

// RequestTimeoutProperty, a catalog property, sets the request timeout (a Go
// duration) for that catalog's calls and, the shortest of them, for S3
// storage (one HTTP client serves every S3 table of a run).
const RequestTimeoutProperty = "icewright.request-timeout"

// storageMaxAttempts is how many times one storage request is tried.
const storageMaxAttempts = 4

// requestTimeout is the session's storage request timeout.
func (s *Session) requestTimeout() time.Duration {
	d := s.opts.RequestTimeout
	for _, c := range s.cfg.Catalogs {
		if v, err := time.ParseDuration(c.Properties[RequestTimeoutProperty]); err == nil && v > 0 && (d == 0 || v < d) {
			d = v
		}
	}
	if d <= 0 {
		d = defaultRequestTimeout
	}
	return d
}

// catalogTimeout is one catalog call's deadline: the catalog's request
// timeout (RequestTimeoutProperty, else the session's) for each of
// storageMaxAttempts attempts, since a load also reads the metadata file.
func (s *Session) catalogTimeout(name string) time.Duration {
	d := s.opts.RequestTimeout
	if cc, err := s.catalogConfig(name); err == nil {
		if v, err := time.ParseDuration(cc.Properties[RequestTimeoutProperty]); err == nil && v > 0 {
			d = v
		}
	}
	if d <= 0 {
		d = defaultRequestTimeout
	}
	return d * storageMaxAttempts
}

// WithStorageLimits returns ctx carrying the S3 configuration with the
// request timeout and bounded retries. Every flow that reaches storage
// (plan, apply, inspect, restore) starts with it.
func (s *Session) WithStorageLimits(ctx context.Context) context.Context {
	if utils.GetAwsConfig(ctx) != nil {
		return ctx
	}
	ctx = bound.With(ctx, s.callBound())
	ctx = bound.WithStallLimit(ctx, s.opts.StallLimit)
	cfg, err := s.awsConfig(ctx)
	if err != nil || cfg == nil {
		// iceberg-go parses the same properties when it opens the FS and
		// reports the error there, for the tables that use S3.
		return ctx
	}
	return utils.WithAwsConfig(ctx, cfg)
}

// WithStorageBreaker returns ctx carrying a new breaker (bound.Breaker):
// once StallLimit storage attempts in a row made no progress, no further
// storage request is sent with ctx, those in flight are cut, and the
// destructive loops stop starting files. Apply gives each table's work one
// (its lease, its actions, the lease's release), so that a store that
// stops answering ends that table's apply within about StallLimit request
// timeouts instead of each request's retries, and the other tables, whose
// prefixes may still answer, go on.
func WithStorageBreaker(ctx context.Context) context.Context {
	return bound.WithBreaker(ctx)
}

// StorageUnresponsive is the error of ctx's storage breaker once it has
// tripped (the store was judged unresponsive), else nil.
func StorageUnresponsive(ctx context.Context) error { return bound.BreakerOf(ctx).Err() }

type awsConfigOnce struct {
	once sync.Once
	cfg  *aws.Config
	err  error
}

func (s *Session) awsConfig(ctx context.Context) (*aws.Config, error) {
	s.mu.Lock()
	if s.aws == nil {
		s.aws = &awsConfigOnce{}
	}
	a := s.aws
	s.mu.Unlock()
	a.once.Do(func() {
		props, err := s.s3ClientProps()
		if err != nil {
			a.err = err
			return
		}
		cfg, err := s3.ParseAWSConfig(context.WithoutCancel(ctx), props)
		if err != nil {
			a.err = err
			return
		}
		var inner aws.HTTPClient = cfg.HTTPClient
		if inner == nil {
			inner = awshttp.NewBuildableClient()
		}
		cfg.HTTPClient = &bound.StallClient{Inner: inner, Timeout: s.requestTimeout()}
		// The SDK's own logger writes to stderr in its own format; the
		// standard log package is routed through icewright's logger.
		cfg.Logger = logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
			stdlog.Printf("%s %s", c, fmt.Sprintf(format, v...))
		})
		cfg.Retryer = func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = storageMaxAttempts
				o.MaxBackoff = 5 * time.Second
			})
		}
		a.cfg = cfg
	})
	return a.cfg, a.err
}

// s3ClientProps are the properties that shape the one HTTP client: those
// that iceberg-go reads into the client rather than per request. Catalogs
// that disagree on them cannot share it.
func (s *Session) s3ClientProps() (map[string]string, error) {
	out := map[string]string{}
	for _, c := range s.cfg.Catalogs {
		for _, k := range []string{"s3.proxy-uri", "s3.connect-timeout", "s3.region", "client.region"} {
			v, ok := c.Properties[k]
			if !ok {
				continue
			}
			if old, seen := out[k]; seen && old != v && !strings.HasSuffix(k, "region") {
				return nil, fmt.Errorf("catalogs set different %s; icewright uses one S3 HTTP client per run", k)
			}
			out[k] = v
		}
	}
	return out, nil
}

// callBound is the bound of one catalog call for calls that do not say
// which catalog they go to (a table's transaction commits through the
// catalog it was loaded from): the longest of the catalogs' bounds, so that
// no catalog's call is cut shorter than its own setting.
func (s *Session) callBound() time.Duration {
	var d time.Duration
	for _, c := range s.cfg.Catalogs {
		d = max(d, s.catalogTimeout(c.Name))
	}
	if d == 0 {
		d = s.catalogTimeout("")
	}
	return d
}
