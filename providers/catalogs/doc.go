// Package catalogs opens the catalogs a configuration declares through
// iceberg-go: sql on sqlite or PostgreSQL (with icewright's own sqlite handle,
// see internal/lakehouse), rest, glue, hive and hadoop, and
// registers the object stores (s3, gs, abfs; file is built in); Walk lists
// every table of one. The session in providers opens them lazily, one per
// name. Each catalog type is one descriptor (Type, in types.go): how it
// opens, whether iceberg-go names its metadata files, and doctor's probes
// of it.
package catalogs
