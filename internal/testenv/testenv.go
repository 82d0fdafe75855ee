package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// RequireServicesEnv, set to 1, turns every "service missing" skip into a
// failure. CI sets it; a developer's quick `go test ./...` does not.
const RequireServicesEnv = "ICEWRIGHT_REQUIRE_SERVICES"

// Required reports whether missing services must fail tests.
func Required() bool {
	v := os.Getenv(RequireServicesEnv)
	return v == "1" || strings.EqualFold(v, "true")
}

const startHint = "run scripts/services.sh start && eval \"$(scripts/services.sh env)\""

// lookup returns the values of vars, or skips (fails under
// ICEWRIGHT_REQUIRE_SERVICES=1) naming the service and the first missing variable.
func lookup(t testing.TB, service string, vars ...string) []string {
	t.Helper()
	vals := make([]string, len(vars))
	for i, v := range vars {
		vals[i] = os.Getenv(v)
		if vals[i] == "" {
			missing(t, "needs "+service+" ("+v+" is not set): "+startHint)
			return nil
		}
	}
	return vals
}

// missing skips, or fails when services are required.
func missing(t testing.TB, msg string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s=1 but %s", RequireServicesEnv, msg)
	}
	t.Skip(msg)
}

// Postgres returns the DSN of the PostgreSQL server (database "postgres").
// Prefer PostgresDatabase for a database of the test's own.
func Postgres(t testing.TB) string {
	t.Helper()
	return lookup(t, "PostgreSQL", "ICEWRIGHT_TEST_PG_DSN")[0]
}

// S3Env is an S3 endpoint with a bucket the tests may write to.
type S3Env struct {
	Endpoint  string // http://127.0.0.1:7070
	AccessKey string
	SecretKey string
	Region    string
	Bucket    string
	// Prefix is unique to the test that asked (no leading or trailing
	// slash), so tests sharing the bucket never see each other's objects.
	Prefix string
	// OtherBucket is a second, empty bucket (private servers only:
	// StartS3), for paths on other storage than the table location.
	OtherBucket string
}

// Properties are the iceberg-go IO properties for this endpoint.
func (e S3Env) Properties() map[string]string {
	return map[string]string{
		"s3.endpoint":          e.Endpoint,
		"s3.access-key-id":     e.AccessKey,
		"s3.secret-access-key": e.SecretKey,
		"s3.region":            e.Region,
	}
}

// URL returns s3://bucket/prefix/elem..., the test's own part of the bucket.
func (e S3Env) URL(elem ...string) string {
	parts := append([]string{e.Bucket, e.Prefix}, elem...)
	return "s3://" + strings.Join(nonEmpty(parts), "/")
}

// S3 returns the S3 server for warehouses (versitygw in CI), with a prefix
// unique to t.
func S3(t testing.TB) S3Env {
	t.Helper()
	v := lookup(t, "an S3 server", "ICEWRIGHT_TEST_S3_ENDPOINT", "ICEWRIGHT_TEST_S3_ACCESS_KEY",
		"ICEWRIGHT_TEST_S3_SECRET_KEY", "ICEWRIGHT_TEST_S3_BUCKET")
	return S3Env{
		Endpoint: v[0], AccessKey: v[1], SecretKey: v[2], Bucket: v[3],
		Region: envOr("ICEWRIGHT_TEST_S3_REGION", "us-east-1"),
		Prefix: UniqueName(t, ""),
	}
}

// RESTEnv is an Iceberg REST catalog and the S3 endpoint its warehouse is on.
type RESTEnv struct {
	URI       string // http://127.0.0.1:8181
	Warehouse string // s3://<table bucket>
	S3        S3Env  // the catalog's object store; Bucket is the table bucket
}

// Credential is the catalog's client credential, "key:secret".
func (e RESTEnv) Credential() string { return e.S3.AccessKey + ":" + e.S3.SecretKey }

// Properties are iceberg-go's REST catalog properties, including the s3.*
// keys for the catalog's object store.
func (e RESTEnv) Properties() map[string]string {
	p := e.S3.Properties()
	p["uri"] = e.URI
	p["warehouse"] = e.Warehouse
	p["credential"] = e.Credential()
	return p
}

// REST returns the Iceberg REST catalog (SeaweedFS in CI). Tests should
// create namespaces named with UniqueName, since the catalog is shared.
func REST(t testing.TB) RESTEnv {
	t.Helper()
	v := lookup(t, "an Iceberg REST catalog", "ICEWRIGHT_TEST_REST_URI", "ICEWRIGHT_TEST_REST_WAREHOUSE",
		"ICEWRIGHT_TEST_REST_S3_ENDPOINT", "ICEWRIGHT_TEST_REST_ACCESS_KEY", "ICEWRIGHT_TEST_REST_SECRET_KEY")
	bucket := strings.TrimPrefix(v[1], "s3://")
	bucket, _, _ = strings.Cut(bucket, "/")
	return RESTEnv{
		URI: v[0], Warehouse: v[1],
		S3: S3Env{
			Endpoint: v[2], AccessKey: v[3], SecretKey: v[4], Bucket: bucket,
			Region: envOr("ICEWRIGHT_TEST_REST_REGION", "us-east-1"),
			Prefix: UniqueName(t, ""),
		},
	}
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// UniqueName returns a lower-case identifier made of prefix, the test's name
// and random hex, usable as a namespace, database or object prefix.
func UniqueName(t testing.TB, prefix string) string {
	name := strings.Trim(unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "_"), "_")
	if len(name) > 40 {
		// Keep both ends: the test's name and its subtest's.
		name = strings.TrimRight(name[:20], "_") + "_" + strings.TrimLeft(name[len(name)-19:], "_")
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	parts := nonEmpty([]string{prefix, name, hex.EncodeToString(b[:])})
	s := strings.Join(parts, "_")
	if s[0] >= '0' && s[0] <= '9' {
		s = "t" + s
	}
	return s
}

// RepoRoot returns the directory holding go.mod, found upward from the
// working directory (a test's package directory).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// TablesDir is internal/testdata/tables: the tables other engines wrote,
// kept in the repository so that a clone runs its tests with nothing beside
// it.
func TablesDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(RepoRoot(t), "internal", "testdata", "tables")
}

// Fixture returns the path of one of the tables in TablesDir (read-only:
// copy it before use). A missing one fails the test: it is part of the
// repository, so a fixture test must never pass by not running.
func Fixture(t testing.TB, name string) string {
	t.Helper()
	d := filepath.Join(TablesDir(t), name)
	if _, err := os.Stat(filepath.Join(d, "metadata")); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return d
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func nonEmpty(ss []string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s = strings.Trim(s, "/"); s != "" {
			out = append(out, s)
		}
	}
	return out
}
