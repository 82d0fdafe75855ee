package catalogs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"

	// Catalog types register themselves with iceberg-go's catalog registry.
	_ "github.com/apache/iceberg-go/catalog/glue"
	_ "github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/hive"
	_ "github.com/apache/iceberg-go/catalog/rest"

	// Object stores register their schemes with iceberg-go's IO registry;
	// file:// is built in (and replaced below).
	_ "github.com/apache/iceberg-go/io/gocloud/azure"
	_ "github.com/apache/iceberg-go/io/gocloud/gcs"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"

	// PostgreSQL SQL catalogs: registers database/sql driver "pgx".
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/internal/meter"
)

// Local paths open with meter.Local: iceberg-go's LocalFS, which counts
// an action's reads, writes and deletes in its meter (docs/cost.md,
// Actuals).
func init() { meter.RegisterLocal() }

// Open opens one configured catalog. For sql catalogs it also returns
// the *sql.DB, which the session must close (iceberg-go's NewCatalog leaves a
// caller-supplied handle open).
func Open(ctx context.Context, dir string, c *config.Catalog) (catalog.Catalog, *sql.DB, error) {
	props := iceberg.Properties{}
	maps.Copy(props, c.Properties)
	if c.Warehouse != "" {
		props["warehouse"] = config.ResolveWarehouse(c.Warehouse, dir)
	}
	t, ok := types[c.Type]
	if !ok {
		return nil, nil, fmt.Errorf("unsupported catalog type %q", c.Type)
	}
	return t.open(ctx, dir, c, props)
}

// SQLitePath extracts the database file and any query from a sqlite catalog
// URI, with config's spellings: "sqlite:PATH", "sqlite:/abs/path",
// SQLAlchemy's "sqlite:///rel/path" and "sqlite:////abs/path", optionally
// followed by "?query". Relative paths resolve against dir. ":memory:" is
// returned as is.
func SQLitePath(dir, uri string) (path, query string, ok bool) {
	rest, ok := strings.CutPrefix(uri, "sqlite:")
	if !ok {
		return "", "", false
	}
	rest, query, _ = strings.Cut(rest, "?")
	if p, isURL := strings.CutPrefix(rest, "//"); isURL {
		// URL form: the host must be empty, so "///rel" and "////abs".
		if !strings.HasPrefix(p, "/") {
			return "", "", false
		}
		rest = p[1:]
	}
	if rest == "" {
		return "", "", false
	}
	if rest != ":memory:" && !filepath.IsAbs(rest) && dir != "" {
		rest = filepath.Join(dir, rest)
	}
	return rest, query, true
}

func openSQLCatalog(_ context.Context, dir string, c *config.Catalog, props iceberg.Properties) (catalog.Catalog, *sql.DB, error) {
	name, uri := c.Name, c.URI
	var (
		db      *sql.DB
		dialect sqlcat.SupportedDialect
		err     error
	)
	switch {
	case strings.HasPrefix(uri, "sqlite:"):
		path, query, ok := SQLitePath(dir, uri)
		if !ok {
			return nil, nil, fmt.Errorf("bad sqlite uri %q (want sqlite:PATH, sqlite:/abs/path or sqlite:////abs/path)", uri)
		}
		// Opening a missing sqlite file would silently create an empty
		// catalog, and every table would look absent; say what is wrong.
		if path != ":memory:" {
			if _, statErr := os.Stat(path); statErr != nil {
				return nil, nil, fmt.Errorf("sqlite catalog database: %w", statErr)
			}
		}
		db, err = lakehouse.OpenSQLiteDBQuery(path, query)
		dialect = sqlcat.SQLite
	case strings.HasPrefix(uri, "postgres://"), strings.HasPrefix(uri, "postgresql://"):
		db, err = sql.Open("pgx", uri)
		if err == nil {
			if pingErr := db.Ping(); pingErr != nil {
				_ = db.Close()
				db, err = nil, fmt.Errorf("connect: %w", pingErr)
			}
		}
		dialect = sqlcat.Postgres
	case uri == "":
		return nil, nil, errors.New("sql catalog needs a uri (sqlite:PATH or postgres://...)")
	default:
		return nil, nil, fmt.Errorf("unsupported sql catalog uri %q (want sqlite:PATH or postgres://...)", config.RedactURI(uri))
	}
	if err != nil {
		return nil, nil, err
	}
	cat, err := lakehouse.NewSQLCatalog(name, db, dialect, props)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return cat, db, nil
}
