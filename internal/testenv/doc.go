// Package testenv gives tests the real servers that scripts/services.sh
// starts (PostgreSQL, an S3 server, an Iceberg REST catalog) and the shared
// fixtures beside the repository.
//
// A test that needs a service calls Postgres, S3 or REST. When the service's
// environment variables are missing the test is skipped with the command that
// starts it, unless ICEWRIGHT_REQUIRE_SERVICES=1 (as in CI), where it fails.
//
// It may import only the standard library, iceberg-go (to wait for a REST
// catalog) and database drivers; nothing of icewright.
package testenv
