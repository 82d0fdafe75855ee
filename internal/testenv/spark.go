package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// SparkEnv is the Spark Connect server scripts/services.sh starts (Spark
// with the Iceberg runtime, local mode) and the Python that drives it.
// Spark's catalogs are `local` (JDBC in the SQLite file LocalDB, warehouse
// LocalWarehouse), `pg` (JDBC in the PostgreSQL of ICEWRIGHT_TEST_PG_DSN,
// warehouse s3://<bucket>/spark-pg on the S3 server) and `rest` (the REST
// catalog). An icewright catalog with the same label reads the same tables.
// Tests should create namespaces named with UniqueName: the server is shared.
type SparkEnv struct {
	Remote         string // sc://127.0.0.1:15002
	LocalDB        string // the SQLite file of Spark's `local` catalog
	LocalWarehouse string // its warehouse directory
	Python         string // a python with pyspark's Connect client, PyIceberg and Zamboni
}

// Spark returns the Spark Connect server, or skips (fails under
// ICEWRIGHT_REQUIRE_SERVICES=1) when it is not running.
func Spark(t testing.TB) SparkEnv {
	t.Helper()
	v := lookup(t, "a Spark Connect server", "ICEWRIGHT_TEST_SPARK_REMOTE", "ICEWRIGHT_TEST_SPARK_LOCAL_DB",
		"ICEWRIGHT_TEST_SPARK_LOCAL_WAREHOUSE")
	if v == nil {
		return SparkEnv{}
	}
	return SparkEnv{Remote: v[0], LocalDB: v[1], LocalWarehouse: v[2], Python: Python(t)}
}

// Python returns the suite's python (scripts/tools.sh spark makes its venv:
// pyspark, PyIceberg, Zamboni), or skips (fails under
// ICEWRIGHT_REQUIRE_SERVICES=1) when it is missing.
func Python(t testing.TB) string {
	t.Helper()
	v := lookup(t, "the suite's python venv (scripts/tools.sh spark)", "ICEWRIGHT_TEST_PYTHON")
	if v == nil {
		return ""
	}
	if _, err := os.Stat(v[0]); err != nil {
		missing(t, "needs the suite's python venv at "+filepath.Dir(filepath.Dir(v[0]))+": run scripts/tools.sh spark")
		return ""
	}
	return v[0]
}
