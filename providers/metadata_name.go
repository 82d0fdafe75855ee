package providers

import (
	"fmt"
	"path"
	"regexp"
	"strconv"

	"github.com/google/uuid"

	"github.com/icewright/icewright/providers/catalogs"
)

// iceberg-go's sql, glue and hive catalogs name a commit's metadata file
// after the current one: NNNNN-<uuid>.metadata.json with NNNNN+1, or
// vN.metadata.json (Spark's hadoop catalog) with N+1. A current file named
// otherwise (vfinal.metadata.json, 00004-v3-upgraded.metadata.json) makes
// every commit fail after its files were written ("invalid metadata
// location"). The rule lives in iceberg-go's catalog/internal, which cannot
// be imported, so its two patterns are repeated here; the test pins them
// against a real commit.
var (
	metadataNameRE       = regexp.MustCompile(`^(\d+)-([\w-]{36})(?:\.\w+)?\.metadata\.json$`)
	legacyMetadataNameRE = regexp.MustCompile(`^v(\d+)(?:\.gz)?\.metadata\.json$`)
)

// committableMetadataName reports whether iceberg-go can derive the next
// metadata file's name from location.
func committableMetadataName(location string) bool {
	base := path.Base(location)
	if m := metadataNameRE.FindStringSubmatch(base); m != nil {
		if _, err := uuid.Parse(m[2]); err != nil {
			return false
		}
		_, err := strconv.Atoi(m[1])
		return err == nil
	}
	if m := legacyMetadataNameRE.FindStringSubmatch(base); m != nil {
		_, err := strconv.Atoi(m[1])
		return err == nil
	}
	return false
}

// commitProblem is why icewright cannot commit to a table of a catalog of type
// catType whose current metadata file is location, or "" when it can.
// REST catalogs name the file on the server and the hadoop catalog by its
// version hint, so only sql, glue and hive are concerned.
//
// Refusing (rather than committing under a name derived from the metadata
// log) is deliberate: the commit is iceberg-go's catalog code, and writing
// around it would mean re-implementing each catalog's compare-and-swap, the
// one step that must never drop a concurrent writer's commit.
func commitProblem(catType, location string) string {
	if !writesMetadata(catType) || location == "" || committableMetadataName(location) {
		return ""
	}
	return fmt.Sprintf("the current metadata file %s is not named NNNNN-<uuid>.metadata.json or vN.metadata.json, so the %s catalog (iceberg-go) cannot name the next one and every commit would fail; "+
		"icewright commits nothing to this table. One commit by another engine (Spark, Trino, PyIceberg) gives the next file a standard name, or register the table at a copy of the file named 00001-<uuid>.metadata.json",
		path.Base(location), catType)
}

// writesMetadata reports whether iceberg-go writes a commit's metadata file
// itself for catalogs of catType (sql, glue, hive), from its own model of
// the table; a REST catalog's server writes it from the commit's changes
// (the catalog type's descriptor says which).
func writesMetadata(catType string) bool {
	return catalogs.Lookup(catType).WritesMetadata
}
