package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// DuckDB is the non-Go reader of the corpus test: node running
// scripts/duckdb-fingerprint.cjs with @duckdb/node-api from an npm prefix.
type DuckDB struct {
	Node   string // the node binary
	Script string // scripts/duckdb-fingerprint.cjs of this checkout
	Prefix string // npm prefix holding node_modules/@duckdb/node-api
}

// Env is the environment the script needs on top of the test's own.
func (d DuckDB) Env() []string {
	return append(os.Environ(), "ICEWRIGHT_DUCKDB_PREFIX="+d.Prefix)
}

// DuckDBReader finds node and the npm prefix that scripts/tools.sh duckdb
// filled: ICEWRIGHT_DUCKDB_PREFIX (scripts/services.sh env sets it), else
// $ICEWRIGHT_CACHE/duckdb, else ~/.cache/icewright-ci/duckdb. It skips (fails under
// ICEWRIGHT_REQUIRE_SERVICES=1) when either is missing.
func DuckDBReader(t testing.TB) DuckDB {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "needs node for the DuckDB reader (scripts/tools.sh duckdb installs it)")
		return DuckDB{}
	}
	prefix := os.Getenv("ICEWRIGHT_DUCKDB_PREFIX")
	if prefix == "" {
		prefix = filepath.Join(ToolsCache(), "duckdb")
	}
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		missing(t, "needs @duckdb/node-api in "+prefix+" (run scripts/tools.sh duckdb)")
		return DuckDB{}
	}
	return DuckDB{Node: node, Script: filepath.Join(RepoRoot(t), "scripts", "duckdb-fingerprint.cjs"), Prefix: prefix}
}
