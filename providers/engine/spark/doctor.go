package spark

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// Doctor turns a Probe of the endpoint into doctor's findings, each failure
// with what to do by its class (network, TLS, auth, permission, not found,
// timeout), as doctor advises for a catalog. The checks are `reachable`
// (the endpoint answers a statement, with Spark's version), `catalog` (one
// per probed catalog) and `procedures` (its rewrite_data_files exists).
func (e *Engine) Doctor(ctx context.Context, labels []string) []diff.DoctorFinding {
	within := ""
	if dl, ok := ctx.Deadline(); ok {
		within = fmt.Sprintf(" (deadline %s)", config.FormatDuration(time.Until(dl).Round(time.Second)))
	}
	p := e.Probe(ctx, labels)
	remote := RedactRemote(e.remote)
	var out []diff.DoctorFinding
	add := func(check, status, msg, fix string) {
		out = append(out, diff.DoctorFinding{Engine: Name, Check: check, Status: status, Message: msg, Fix: fix})
	}
	switch {
	case p.Dial != nil && p.Address == "":
		add("reachable", diff.DoctorFail, fmt.Sprintf("remote %s is not a Spark Connect URL: %v", remote, p.Dial), "remote is sc://host:port, with ;token=... when the endpoint needs one")
		return out
	case p.Dial != nil:
		add("reachable", diff.DoctorFail, fmt.Sprintf("nothing answers at %s (remote %s)%s: %v", p.Address, remote, within, deadline(ctx, p.Dial)), hint(p.Dial))
		return out
	case p.Session != nil:
		add("reachable", diff.DoctorFail, fmt.Sprintf("%s accepts connections, and a statement failed%s: %v", p.Address, within, deadline(ctx, p.Session)), hint(p.Session))
		return out
	}
	add("reachable", diff.DoctorOK, fmt.Sprintf("Spark Connect at %s answered: Spark %s", p.Address, p.Version), "")
	for _, c := range p.Catalogs {
		switch {
		case c.Err != nil && ErrorClass(c.Err) == "CATALOG_NOT_FOUND":
			add("catalog", diff.DoctorFail, fmt.Sprintf("Spark has no catalog %q", c.Name),
				fmt.Sprintf("configure it on the server (spark.sql.catalog.%s=org.apache.iceberg.spark.SparkCatalog over the same Iceberg catalog), or name Spark's catalog with the engine block's catalog", c.Name))
		case c.Err != nil:
			add("catalog", diff.DoctorFail, fmt.Sprintf("Spark cannot list the namespaces of catalog %q: %v", c.Name, deadline(ctx, c.Err)), hint(c.Err))
		default:
			add("catalog", diff.DoctorOK, fmt.Sprintf("Spark's catalog %q lists its namespaces", c.Name), "")
			if c.Procedure != nil {
				add("procedures", diff.DoctorFail, fmt.Sprintf("Spark's catalog %q has no %s procedure: %v", c.Name, Procedure, deadline(ctx, c.Procedure)),
					fmt.Sprintf("the catalog must be Iceberg's (org.apache.iceberg.spark.SparkCatalog) with the Iceberg runtime and spark.sql.extensions=%s on the server", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"))
			} else {
				add("procedures", diff.DoctorOK, fmt.Sprintf("%s.%s exists", ident(c.Name), Procedure), "")
			}
		}
	}
	return out
}

// deadline names the probe's deadline when ctx ran out: the client's own
// error then only says the context ended.
func deadline(ctx context.Context, err error) error {
	if ctx.Err() != nil || ErrorCode(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
		if dl, ok := ctx.Deadline(); ok {
			return fmt.Errorf("no answer before the deadline (%s): %w", dl.Format("15:04:05Z07:00"), err)
		}
	}
	return err
}

// hint is what to do about a failure of the endpoint, by its class.
func hint(err error) string {
	var ne net.Error
	msg := err.Error()
	switch code := ErrorCode(err); {
	case code == codes.Unauthenticated:
		return "check the token in remote (;token=..., from an env() variable that may be unset or stale)"
	case code == codes.PermissionDenied:
		return "the token was accepted but may not run statements: check its grants on the cluster"
	case code == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "Spark did not answer in time: check that the server runs and is not overloaded (icewright.request-timeout sets the deadline)"
	case strings.Contains(msg, "tls: ") || strings.Contains(msg, "x509: ") || strings.Contains(msg, "handshake"):
		return "a ;token= in remote means TLS: check that the server speaks TLS with a certificate this machine trusts (without a token the connection is plaintext)"
	case code == codes.Unavailable || errors.As(err, &ne):
		return "check remote's host and port, that the Spark Connect server runs (port 15002 by default) and that this machine can reach it"
	}
	return "see the Spark Connect server's log"
}
