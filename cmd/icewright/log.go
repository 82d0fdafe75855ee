package main

import (
	"context"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/cmd/icewright/internal/views"
)

// Log levels of ICEWRIGHT_LOG, in increasing detail.
var logLevels = map[string]slog.Level{
	"error": slog.LevelError,
	"warn":  slog.LevelWarn,
	"info":  slog.LevelInfo,
	"debug": slog.LevelDebug,
}

// newLogger is the logger ICEWRIGHT_LOG and ICEWRIGHT_LOG_FORMAT ask for, on w
// (stderr), stamped by now rather than the wall clock so that a run on a
// fixed clock logs on it. The default level, warn, logs nothing a normal
// run does not already print; the logger is carried by cli and handed to
// what logs, never global.
func newLogger(w io.Writer, env map[string]string, now func() time.Time) (*slog.Logger, error) {
	name := strings.ToLower(strings.TrimSpace(env["ICEWRIGHT_LOG"]))
	if name == "" {
		name = "warn"
	}
	level, ok := logLevels[name]
	if !ok {
		return nil, fmt.Errorf("ICEWRIGHT_LOG=%s: use error, warn, info or debug", env["ICEWRIGHT_LOG"])
	}
	opts := &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Time(slog.TimeKey, now().UTC())
			}
			return a
		},
	}
	switch f := strings.ToLower(strings.TrimSpace(env["ICEWRIGHT_LOG_FORMAT"])); f {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("ICEWRIGHT_LOG_FORMAT=%s: use text or json", env["ICEWRIGHT_LOG_FORMAT"])
	}
}

// startLog sets the logger ICEWRIGHT_LOG asks for. It writes to c.stderr as
// it is at each record (stderrNow), not as it is now: the logger is made
// before the configuration is read, and once it is, its records must pass
// the secret masking put in front of stderr (maskSecrets) like every other
// line there.
func (c *cli) startLog() error {
	log, err := newLogger(stderrNow{c}, c.env, c.now)
	if err != nil {
		return err
	}
	c.log = log
	// iceberg-go and the cloud SDKs log with the standard library's log
	// package (iceberg-go's SQL catalog warns about a legacy schema there;
	// providers hands the AWS SDK's log to it too): their lines go through
	// this logger, at their level, so that ICEWRIGHT_LOG and
	// ICEWRIGHT_LOG_FORMAT govern them and masking sees them.
	stdlog.SetFlags(0)
	stdlog.SetPrefix("")
	stdlog.SetOutput(&thirdPartyLog{log: log})
	return nil
}

// libraryNotes are the library lines icewright knows, said for an
// icewright user (what it means here, what to do), once per run.
var libraryNotes = []struct {
	prefix string // of the line, after its level
	msg    string
}{
	// iceberg-go's SQL catalog, on a database whose iceberg_tables has no
	// iceberg_type column (Java's JdbcCatalog creates it so unless told
	// jdbc.schema-version = V1, and PyIceberg does). It says it on every
	// run, naming a property as iceberg-go's API does.
	{"iceberg_tables is on the legacy V0 schema", "a SQL catalog's iceberg_tables table has the legacy V0 schema " +
		"(no iceberg_type column: Java's JdbcCatalog creates it so unless jdbc.schema-version = V1, and PyIceberg does). " +
		"Harmless: icewright lists, reads and commits its tables the same (iceberg-go runs in V0-compatible mode; only views need the column). " +
		"To migrate the database once, set properties = { \"jdbc.schema-version\" = \"V1\" } in that catalog block: " +
		"the next run adds the column (ALTER TABLE iceberg_tables ADD COLUMN iceberg_type), a one-way change; " +
		"writers that name their columns keep working. ICEWRIGHT_LOG=error hides this warning"},
}

// thirdPartyLog turns a line of the standard log package into a record
// of icewright's logger: "WARN ..."/"WARNING: ..." at warn, "DEBUG ..." at
// debug, "ERROR ..." at error, anything else at info. A line of
// libraryNotes is said in icewright's words, once.
type thirdPartyLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	said map[string]bool
}

func (w *thirdPartyLog) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		level := slog.LevelInfo
		for _, l := range []struct {
			prefix string
			level  slog.Level
		}{{"WARNING:", slog.LevelWarn}, {"WARN", slog.LevelWarn}, {"ERROR", slog.LevelError}, {"DEBUG", slog.LevelDebug}} {
			if rest, ok := strings.CutPrefix(line, l.prefix); ok {
				line, level = strings.TrimSpace(rest), l.level
				break
			}
		}
		if i := slices.IndexFunc(libraryNotes, func(n struct{ prefix, msg string }) bool { return strings.HasPrefix(line, n.prefix) }); i >= 0 {
			w.mu.Lock()
			said := w.said[libraryNotes[i].prefix]
			if w.said == nil {
				w.said = map[string]bool{}
			}
			w.said[libraryNotes[i].prefix] = true
			w.mu.Unlock()
			if said {
				continue
			}
			line = libraryNotes[i].msg
		}
		w.log.Log(context.Background(), level, line, "from", "library")
	}
	return len(p), nil
}

// stderrNow writes to the cli's stderr of the moment.
type stderrNow struct{ c *cli }

func (w stderrNow) Write(p []byte) (int, error) { return w.c.stderr.Write(p) }

// loggedArgs is a command line for the log with the value of every -var
// left out: the line is logged before the configuration says which
// variables are sensitive (and so before masking knows their values).
func loggedArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		name := strings.TrimLeft(out[i], "-")
		dashes := out[i][:len(out[i])-len(name)]
		if dashes != "-" && dashes != "--" {
			continue
		}
		switch flag, kv, hasValue := strings.Cut(name, "="); {
		case flag != "var":
		case hasValue:
			out[i] = dashes + "var=" + withoutValue(kv)
		case i+1 < len(out):
			i++
			out[i] = withoutValue(out[i])
		}
	}
	return out
}

// withoutValue is NAME=VALUE with the value left out.
func withoutValue(kv string) string {
	name, _, _ := strings.Cut(kv, "=")
	return name + "=(not logged)"
}

// logEvents returns a progress hook that logs each event at debug level
// and then passes it on to next. Failures are not logged higher: the
// progress lines and the results already say them, and at the default
// level a run logs nothing twice.
func (c *cli) logEvents(next func(apply.Event)) func(apply.Event) {
	return func(e apply.Event) {
		const level = slog.LevelDebug
		log := c.logger()
		if log.Enabled(context.Background(), level) {
			attrs := []any{slog.String("phase", e.Phase)}
			for _, kv := range [][2]string{{"catalog", e.Catalog}, {"table", e.Table}, {"action", e.Action}, {"unit", e.Unit}} {
				if kv[1] != "" {
					attrs = append(attrs, slog.String(kv[0], kv[1]))
				}
			}
			if e.Done != 0 || e.Total != 0 {
				attrs = append(attrs, slog.Int64("done", e.Done), slog.Int64("total", e.Total))
			}
			if e.Err != nil {
				attrs = append(attrs, slog.String("error", e.Err.Error()))
			}
			log.Log(context.Background(), level, "event", attrs...)
		}
		if next != nil {
			next(e)
		}
	}
}

// logger is c.log, or one that discards for a cli built by hand (tests).
func (c *cli) logger() *slog.Logger {
	if c.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.log
}

// newProgress is the progress renderer of this run: JSON lines on stdout
// for apply -json, else text on stderr (live on a terminal).
func (c *cli) newProgress(quiet bool) *views.Progress {
	if c.jsonEvents {
		return views.NewJSONProgress(c.stdout, c.now)
	}
	return views.NewProgress(c.stderr, c.liveProgress(), quiet, c.colorErr(), c.now)
}
