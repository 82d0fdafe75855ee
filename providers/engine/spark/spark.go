package spark

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/spark-connect-go/spark/client/channel"
	"github.com/apache/spark-connect-go/spark/sparkerrors"
	"github.com/apache/spark-connect-go/spark/sql"
	"google.golang.org/grpc/codes"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// Name is the engine block label of this engine.
const Name = "spark"

// Engine is one Spark Connect endpoint. It connects on first use: a plan
// needs no connection (Plan is pure).
type Engine struct {
	remote  string
	catalog string // the engine block's catalog ("" = the icewright label)

	mu      sync.Mutex
	session sql.SparkSession
}

// New is the engine of an engine "spark" block.
func New(e *config.Engine) *Engine {
	return &Engine{remote: e.Remote, catalog: e.Catalog}
}

func (e *Engine) Name() string { return Name }

func (e *Engine) catalogFor(label string) string {
	if e.catalog != "" {
		return e.catalog
	}
	return label
}

func (e *Engine) connect(ctx context.Context) (sql.SparkSession, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.session != nil {
		return e.session, nil
	}
	s, err := sql.NewSessionBuilder().Remote(e.remote).Build(ctx)
	if err != nil {
		return nil, e.clean(fmt.Errorf("connect to Spark at %s: %w", RedactRemote(e.remote), err))
	}
	e.session = s
	return s, nil
}

// clean keeps the endpoint's token out of an error: spark-connect-go names
// the connection string in some of its own. A failure Spark reported is
// said once, as Spark worded it: spark-connect-go's own text repeats the
// error class and the SQLSTATE ("execution error: failed to execute sql:
// <statement>: execution error: [X] [X] ... SQLSTATE: 1. SQLSTATE: 1"),
// and the statement is the plan's, shown there already.
func (e *Engine) clean(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var se *sparkerrors.SparkError
	if errors.As(err, &se) && se.Message != "" {
		msg = se.Message
		if se.Code != codes.Internal && se.Code != codes.Unknown {
			msg = se.Code.String() + ": " + msg
		}
	}
	red := RedactRemote(e.remote)
	if red != e.remote {
		msg = strings.ReplaceAll(msg, e.remote, red)
	}
	if msg == err.Error() {
		return err
	}
	return &cleaned{msg: msg, err: err}
}

// cleaned is an error said shorter: ErrorCode and ErrorClass still find
// Spark's error under it.
type cleaned struct {
	msg string
	err error
}

func (c *cleaned) Error() string { return c.msg }
func (c *cleaned) Unwrap() error { return c.err }

// query runs one statement and collects its rows as Go values.
func (e *Engine) query(ctx context.Context, stmt string) ([][]any, error) {
	s, err := e.connect(ctx)
	if err != nil {
		return nil, err
	}
	df, err := s.Sql(ctx, stmt)
	if err != nil {
		return nil, e.clean(err)
	}
	rows, err := df.Collect(ctx)
	if err != nil {
		return nil, e.clean(err)
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = r.Values()
	}
	return out, nil
}

// Run sends a planned statement. The result is the procedure's row as
// Spark names it ("rewritten_data_files_count=3, ..."), for the apply's
// result; an error is Spark's message.
func (e *Engine) Run(ctx context.Context, call diff.EngineCall) (string, error) {
	// Spark's Iceberg catalog caches a loaded table; the rewrite must
	// plan on the table as it is now, after icewright's own commits.
	if _, err := e.query(ctx, "REFRESH TABLE "+call.Target); err != nil {
		return "", fmt.Errorf("spark: %w", err)
	}
	s, err := e.connect(ctx)
	if err != nil {
		return "", err
	}
	df, err := s.Sql(ctx, call.Statement)
	if err != nil {
		return "", fmt.Errorf("spark: %w", e.clean(err))
	}
	rows, err := df.Collect(ctx)
	if err != nil {
		return "", fmt.Errorf("spark: %w", e.clean(err))
	}
	if len(rows) != 1 {
		return "", fmt.Errorf("spark: rewrite_data_files returned %d rows, want 1", len(rows))
	}
	names, vals := rows[0].FieldNames(), rows[0].Values()
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprintf("%s=%v", names[i], v)
	}
	return strings.Join(parts, ", "), nil
}

// Fingerprint counts the rows of the call's partition in snapshot id of
// the table, read by Spark, and sums a 64-bit hash of each whole row
// (as an exact decimal, so the sum cannot overflow): a rewrite that keeps
// the rows keeps both, whatever the files' order.
func (e *Engine) Fingerprint(ctx context.Context, call diff.EngineCall, snapshotID int64) (diff.RowFingerprint, error) {
	stmt := fmt.Sprintf("SELECT count(*), CAST(coalesce(sum(CAST(xxhash64(*) AS DECIMAL(38,0))), 0) AS STRING) FROM %s VERSION AS OF %d", call.Target, snapshotID)
	if call.Filter != "" {
		stmt += " WHERE " + call.Filter
	}
	rows, err := e.query(ctx, stmt)
	if err != nil {
		return diff.RowFingerprint{}, fmt.Errorf("spark: fingerprint of snapshot %d: %w", snapshotID, err)
	}
	if len(rows) != 1 || len(rows[0]) != 2 {
		return diff.RowFingerprint{}, fmt.Errorf("spark: fingerprint of snapshot %d: unexpected result %v", snapshotID, rows)
	}
	n, ok := rows[0][0].(int64)
	if !ok {
		return diff.RowFingerprint{}, fmt.Errorf("spark: fingerprint of snapshot %d: count is %T", snapshotID, rows[0][0])
	}
	return diff.RowFingerprint{Rows: n, Digest: fmt.Sprint(rows[0][1])}, nil
}

// Procedure is the Iceberg procedure every delegated partition calls.
const Procedure = "system.rewrite_data_files"

// Probe is what `icewright doctor` learns of the endpoint, step by step;
// a step after one that failed is not tried (its error is nil and its
// value empty). Nothing is rewritten: the procedure is described, never
// called.
type Probe struct {
	// Address is the endpoint's host:port; Dial is the TCP connection's
	// failure.
	Address string
	Dial    error
	// Version is Spark's version(); Session is the failure of the first
	// statement (a login, a TLS or a protocol error shows here).
	Version string
	Session error
	// Catalogs are the probed catalog names, each with its failure
	// (nil: Spark has it and lists its namespaces) and, when it answered, the failure
	// of describing its rewrite_data_files (nil: the procedure exists).
	Catalogs []CatalogProbe
}

// CatalogProbe is one catalog of a Probe.
type CatalogProbe struct {
	Name      string
	Err       error
	Procedure error
}

// Probe checks the endpoint for labels, the icewright catalogs whose tables
// may be delegated (the engine block's catalog, when it names one, is
// probed instead). Each step is bounded by ctx.
func (e *Engine) Probe(ctx context.Context, labels []string) Probe {
	var p Probe
	cb, err := channel.NewBuilder(e.remote)
	if err != nil {
		p.Dial = e.clean(err)
		return p
	}
	p.Address = net.JoinHostPort(cb.Host(), strconv.Itoa(cb.Port()))
	// A dial first: a wrong host or port fails here at once, where the
	// client would retry an unavailable server for minutes.
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.Address)
	if err != nil {
		p.Dial = err
		return p
	}
	_ = conn.Close()
	rows, err := e.query(ctx, "SELECT version()")
	if err != nil {
		p.Session = err
		return p
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		p.Version, _, _ = strings.Cut(fmt.Sprint(rows[0][0]), " ") // "4.1.4 <git hash>"
	}
	names := labels
	if e.catalog != "" {
		names = []string{e.catalog}
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		c := CatalogProbe{Name: name}
		// SET CATALOG fails with CATALOG_NOT_FOUND for a catalog Spark
		// does not have (SHOW NAMESPACES IN would look for a namespace of
		// the session catalog); doctor's session is its own, thrown away.
		if _, c.Err = e.query(ctx, "SET CATALOG "+ident(name)); c.Err == nil {
			_, c.Err = e.query(ctx, "SHOW NAMESPACES IN "+ident(name))
		}
		if c.Err == nil {
			_, c.Procedure = e.query(ctx, "DESCRIBE PROCEDURE "+ident(name)+"."+Procedure)
		}
		p.Catalogs = append(p.Catalogs, c)
	}
	return p
}

// ErrorCode is the gRPC status code of a Spark Connect failure
// (codes.Unknown when err is none).
func ErrorCode(err error) codes.Code {
	var se *sparkerrors.SparkError
	if errors.As(err, &se) {
		return se.Code
	}
	return codes.Unknown
}

// ErrorClass is Spark's error class of a failure ("" when it has none):
// CATALOG_NOT_FOUND, for one.
func ErrorClass(err error) string {
	var se *sparkerrors.SparkError
	if errors.As(err, &se) {
		return se.ErrorClass
	}
	return ""
}

// Close ends the session (spark-connect-go's Stop releases nothing more).
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.session == nil {
		return nil
	}
	err := e.session.Stop()
	e.session = nil
	return err
}
