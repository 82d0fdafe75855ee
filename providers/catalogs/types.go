package catalogs

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/icewright/icewright/config"
)

// Type is one catalog type's descriptor: everything icewright does
// differently for it beyond config (whose catalogTypes table holds its
// name, attributes and checks: TestTypesAreConfigs holds the two lists
// equal). Adding a catalog type is a row in config's table and one in
// types.
type Type struct {
	// open opens a catalog of this type; props are the block's properties
	// with its warehouse resolved. For sql it also returns the *sql.DB the
	// session must close.
	open func(ctx context.Context, dir string, c *config.Catalog, props iceberg.Properties) (catalog.Catalog, *sql.DB, error)

	// WritesMetadata: iceberg-go writes a commit's metadata file itself,
	// naming it after the current one, so a current file named otherwise
	// makes every commit fail (providers' commitProblem). A REST server
	// names its own files, and the hadoop catalog uses its version hint.
	WritesMetadata bool

	// SharedStore: several catalog names can live in one store (a sql
	// catalog's database holds a catalog_name column), which doctor and the
	// orphan sweep look at (diff.CatalogNamesShared).
	SharedStore bool

	// WarehouseNotProbed is why doctor's storage probe goes under a table's
	// location rather than the warehouse's, "" when the warehouse (if a
	// storage location) may be probed.
	WarehouseNotProbed string

	// VendsCredentials: the catalog may hand out storage credentials with
	// each table, so doctor finding none locally is a warning.
	VendsCredentials bool

	// Auth says how icewright authenticates to a catalog of this type, by
	// the name of the setting only (doctor's catalog-auth finding; never a
	// value). getenv reads the environment icewright runs with. Nil: the
	// type has no credentials of its own (hive, hadoop).
	Auth func(c *config.Catalog, getenv func(string) string) string

	// UnreachableFix is doctor's advice when a catalog of this type cannot
	// be reached, "" for the general one (uri, server, network).
	UnreachableFix func(c *config.Catalog) string
}

// types are the catalog types, by the value of a catalog block's type.
var types = map[string]*Type{
	"sql": {
		open:           openSQLCatalog,
		WritesMetadata: true,
		SharedStore:    true,
		Auth:           sqlAuth,
		UnreachableFix: func(c *config.Catalog) string {
			if strings.HasPrefix(c.URI, "sqlite:") {
				return "check the sqlite file's path (relative to the configuration directory) and that this user can read it"
			}
			return ""
		},
	},
	"rest": {
		open:               openRESTCatalog,
		WarehouseNotProbed: "a REST catalog's warehouse belongs to its server",
		VendsCredentials:   true,
		Auth:               restAuth,
	},
	"glue": {open: openRegistered, WritesMetadata: true, Auth: glueAuth},
	"hive": {open: openRegistered, WritesMetadata: true},
	"hadoop": {
		open:               openRegistered,
		WarehouseNotProbed: "a Hadoop catalog's warehouse directories are its namespaces",
		UnreachableFix: func(*config.Catalog) string {
			return "check that the warehouse directory exists and that this user can read it"
		},
	},
}

// Lookup is the descriptor of catalog type name; an unknown type (config
// refuses one) has the zero descriptor, whose open fails.
func Lookup(name string) *Type {
	if t, ok := types[name]; ok {
		return t
	}
	return &Type{}
}

// Names are the catalog types types holds, sorted.
func Names() []string { return slices.Sorted(maps.Keys(types)) }

// openRegistered opens a catalog type that registers itself with
// iceberg-go's catalog registry (glue, hive, hadoop).
func openRegistered(ctx context.Context, _ string, c *config.Catalog, props iceberg.Properties) (catalog.Catalog, *sql.DB, error) {
	props["type"] = c.Type
	if c.URI != "" {
		props["uri"] = c.URI
	}
	cat, err := catalog.Load(ctx, c.Name, props)
	if err != nil {
		return nil, nil, err
	}
	return cat, nil, nil
}

func openRESTCatalog(ctx context.Context, _ string, c *config.Catalog, props iceberg.Properties) (catalog.Catalog, *sql.DB, error) {
	cat, err := openREST(ctx, c.Name, c.URI, props)
	if err != nil {
		return nil, nil, err
	}
	return cat, nil, nil
}

func restAuth(c *config.Catalog, _ func(string) string) string {
	p := c.Properties
	switch {
	case p["credential"] != "":
		return "REST: an OAuth2 client credential in the properties (credential)"
	case p["token"] != "":
		return "REST: a bearer token in the properties (token)"
	case p["rest.sigv4-enabled"] == "true":
		return "REST: SigV4 signing with the AWS default credential chain (rest.sigv4-enabled)"
	}
	return "REST: no credential, token or SigV4 in the properties: the server must accept anonymous requests"
}

func glueAuth(c *config.Catalog, _ func(string) string) string {
	if c.Properties["glue.access-key-id"] != "" {
		return "Glue: static keys in the properties (glue.access-key-id)"
	}
	return "Glue: the AWS default credential chain (environment, profile, IRSA, instance role)"
}

// sqlAuth finds a password in the URI with config's masking rule, never
// reading it out.
func sqlAuth(c *config.Catalog, getenv func(string) string) string {
	switch {
	case strings.HasPrefix(c.URI, "sqlite:"):
		return "sqlite: a local file, no credentials"
	case config.RedactURI(c.URI) != c.URI:
		return "PostgreSQL: a password in the uri"
	case getenv("PGPASSWORD") != "":
		return "PostgreSQL: PGPASSWORD from the environment"
	}
	return "PostgreSQL: no password in the uri or PGPASSWORD (pgx still reads ~/.pgpass, or the server trusts the user)"
}
