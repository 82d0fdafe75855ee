package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
)

// CatalogName is the demo's catalog name.
const CatalogName = "demo"

// demoConfig is the demo's configuration. Its policies make the plan hold
// every action kind on analytics.events and clicks, and leave users (built
// to already match policy "base") in policy.
const demoConfig = `# Written by "icewright demo". Run "icewright plan" in this directory.

catalog "demo" {
  type      = "sql"
  uri       = "sqlite:lakehouse/catalog.db"
  warehouse = "lakehouse/warehouse"
}

policy "base" {
  target_file_size = "128MiB"

  compaction {
    min_input_files = 5
  }

  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 3
  }

  orphan_files {
    older_than = "3d"
  }

  manifests {
    max_count = 20
  }

  properties = {
    "write.parquet.compression-codec" = "zstd"
  }

  # The demo's tables are local files, which have no prices: priced as if
  # they were on S3 Standard, the plan shows what a run would cost there.
  pricing {
    storage = "s3"
  }
}

policy "events" {
  extends    = policy.base
  sort_order = ["event_ts desc nulls last"]

  compaction {
    strategy = "sort"
  }
}

table "demo.analytics.events" {
  policy = policy.events
}

table "demo.analytics.clicks" {
  policy = policy.base

  manifests {
    max_count = 10
  }
}

table "demo.analytics.users" {
  policy = policy.base
}
`

// usersProperties are what policy "base" puts on a table (docs/design.md §3.4), so
// that the users table starts in policy.
var usersProperties = iceberg.Properties{
	"write.target-file-size-bytes":         "134217728",
	"history.expire.max-snapshot-age-ms":   "604800000",
	"history.expire.min-snapshots-to-keep": "3",
	"write.parquet.compression-codec":      "zstd",
}

// Build builds a local lakehouse with realistic maintenance debt in dir:
// dir/lakehouse/catalog.db (a sqlite catalog named "demo"),
// dir/lakehouse/warehouse, and dir/demo.icewright.hcl. Every table is made by
// real iceberg-go commits:
//
//   - analytics.events, partitioned by day: 60 small appends over 4 day
//     partitions (240 small files, 60 manifests), history spread over 13.5
//     days by the time machine, a tag "q3-close" on an old snapshot, and stray
//     files in its data directory (two old, one young, one Hadoop .crc);
//   - analytics.clicks: 25 small appends, so 25 manifests against a
//     max_count of 10;
//   - analytics.users: one file, already carrying the policy's properties.
//
// "Old" is made honestly: iceberg-go stamps commits with the wall clock, so
// after each batch of commits the table's timestamps are shifted back by a
// new metadata version committed through the catalog (lakehouse.Backdate,
// the demo's time machine), and stray files get old mtimes (now - 10 days).
//
// now is the caller's clock, not necessarily the wall clock: every date in
// the demo (partition values, snapshot and metadata-log timestamps, stray
// mtimes) is derived from it, and each table's last shift also moves its
// history from the wall clock to now. So the same now builds the same demo
// on any day (the goldens rely on it), and the real now builds one that is
// current. It refuses a dir that exists and is not empty.
func Build(ctx context.Context, dir string, now time.Time) (*diff.DemoLakehouse, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("demo: %s exists and is not empty; choose another directory", abs)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("demo: %w", err)
	}
	info := &diff.DemoLakehouse{
		Dir:        abs,
		ConfigFile: filepath.Join(abs, "demo.icewright.hcl"),
		CatalogDB:  filepath.Join(abs, "lakehouse", "catalog.db"),
		Warehouse:  filepath.Join(abs, "lakehouse", "warehouse"),
		Catalog:    CatalogName,
	}
	if err := os.MkdirAll(info.Warehouse, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	db, err := lakehouse.OpenSQLiteDB(info.CatalogDB)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer db.Close()
	cat, err := lakehouse.NewSQLCatalog(CatalogName, db, sqlcat.SQLite, iceberg.Properties{"warehouse": info.Warehouse})
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer cat.Close()
	if err := cat.CreateNamespace(ctx, table.Identifier{"analytics"}, nil); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	b := &demoBuilder{ctx: ctx, cat: cat, backdate: func(t *table.Table, d time.Duration) (*table.Table, error) {
		if _, err := lakehouse.Backdate(ctx, db, CatalogName, t, d); err != nil {
			return nil, err
		}
		return cat.LoadTable(ctx, t.Identifier())
	}, now: now}

	if err := b.events(); err != nil {
		return nil, fmt.Errorf("demo: analytics.events: %w", err)
	}
	if err := b.clicks(); err != nil {
		return nil, fmt.Errorf("demo: analytics.clicks: %w", err)
	}
	if err := b.users(); err != nil {
		return nil, fmt.Errorf("demo: analytics.users: %w", err)
	}
	if err := os.WriteFile(info.ConfigFile, []byte(demoConfig), 0o644); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	info.Tables = []diff.DemoTable{
		{Address: "demo.analytics.events", Debt: "240 small files in 4 day partitions, 60 manifests, 13 days of snapshots, a tag on an old snapshot, stray files"},
		{Address: "demo.analytics.clicks", Debt: "25 manifests (policy allows 10), small files"},
		{Address: "demo.analytics.users", Debt: "already in policy"},
	}
	return info, nil
}

// The events table's history: demoBatches batches of demoBatchCommits
// appends, demoBatchStep apart.
const (
	demoBatches      = 10
	demoBatchCommits = 6
	demoBatchStep    = 36 * time.Hour
	demoTagBatch     = 4
)

type demoBuilder struct {
	ctx      context.Context
	cat      catalog.Catalog
	backdate func(*table.Table, time.Duration) (*table.Table, error)
	now      time.Time
	nextID   int64
}

// settle is a table's last shift: d further back, plus the distance from
// the wall clock, which stamped the commits, to the builder's clock. It is
// always committed (also when both are zero), so the demo has the same
// metadata versions whatever the clocks.
func (b *demoBuilder) settle(t *table.Table, d time.Duration) (*table.Table, error) {
	return b.backdate(t, d+time.Since(b.now))
}

func (b *demoBuilder) appends(t *table.Table, n, rows, spread int, day0 time.Time) (*table.Table, error) {
	for range n {
		var err error
		t, err = lakehouse.AppendEvents(b.ctx, t, b.nextID, rows, day0, spread, nil)
		if err != nil {
			return nil, err
		}
		b.nextID += int64(rows)
	}
	return t, nil
}

func (b *demoBuilder) events() error {
	ident := table.Identifier{"analytics", "events"}
	t, err := b.cat.CreateTable(b.ctx, ident, lakehouse.EventsSchema(),
		catalog.WithPartitionSpec(lakehouse.DaySpec()),
		catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		return err
	}
	day0 := b.now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -4)
	// Ten batches of six commits, each batch then sent 36 hours back: the
	// history spans 13.5 days with no gap between commits longer than 36h
	// (so the 3-day orphan age guard stays above every observed commit
	// gap), and no snapshot sits near the 7-day retention boundary. The tag
	// goes on the first commit of the last batch older than 7 days (7.5
	// days old), so that after expiry the history it keeps has no gap
	// longer than 36h either.
	for batch := range demoBatches {
		if t, err = b.appends(t, demoBatchCommits, 40, 4, day0); err != nil {
			return err
		}
		if batch == demoTagBatch {
			snaps := t.Metadata().Snapshots()
			if _, _, err := b.cat.CommitTable(b.ctx, ident, nil, []table.Update{
				table.NewSetSnapshotRefUpdate("q3-close", snaps[demoTagBatch*demoBatchCommits].SnapshotID, table.TagRef, 0, 0, 0),
			}); err != nil {
				return fmt.Errorf("tag: %w", err)
			}
			if t, err = b.cat.LoadTable(b.ctx, ident); err != nil {
				return err
			}
		}
		shift := b.backdate
		if batch == demoBatches-1 {
			// The newest batch stays at now: only the clocks' distance.
			shift = func(t *table.Table, _ time.Duration) (*table.Table, error) { return b.settle(t, 0) }
		}
		if t, err = shift(t, demoBatchStep); err != nil {
			return err
		}
	}
	// Strays: failed writes left these in the data directory.
	dataDir := filepath.Join(localPath(t.Location()), "data", "event_day="+day0.Format("2006-01-02"))
	old := b.now.Add(-10 * 24 * time.Hour)
	strays := []struct {
		name  string
		size  int
		mtime time.Time
	}{
		{"00000-0-0b7e1c2a-failed-write-00001.parquet", 4096, old},
		{"00001-0-5d2f9e61-failed-write-00001.parquet", 2048, old},
		{".00000-0-0b7e1c2a-failed-write-00001.parquet.crc", 40, old},
		{"00002-0-c81a7f03-in-flight-00001.parquet", 1024, b.now.Add(-time.Hour)},
	}
	for _, s := range strays {
		p := filepath.Join(dataDir, s.name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", s.size)), 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(p, s.mtime, s.mtime); err != nil {
			return err
		}
	}
	return nil
}

func (b *demoBuilder) clicks() error {
	ident := table.Identifier{"analytics", "clicks"}
	t, err := b.cat.CreateTable(b.ctx, ident, lakehouse.EventsSchema(),
		catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		return err
	}
	day0 := b.now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	if t, err = b.appends(t, 25, 20, 1, day0); err != nil {
		return err
	}
	_, err = b.settle(t, 24*time.Hour)
	return err
}

func (b *demoBuilder) users() error {
	ident := table.Identifier{"analytics", "users"}
	props := iceberg.Properties{"format-version": "2"}
	for k, v := range usersProperties {
		props[k] = v
	}
	t, err := b.cat.CreateTable(b.ctx, ident, lakehouse.EventsSchema(), catalog.WithProperties(props))
	if err != nil {
		return err
	}
	day0 := b.now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	if t, err = b.appends(t, 1, 500, 1, day0); err != nil {
		return err
	}
	_, err = b.settle(t, 0)
	return err
}

// localPath turns a local table location ("/x" or "file:///x") into a path.
func localPath(loc string) string {
	if p, ok := strings.CutPrefix(loc, "file://"); ok {
		return p
	}
	return loc
}
