package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// ClassifyCommit sorts an iceberg-go commit error into ErrConflict (safe
// to retry, nothing landed) or ErrCommitUnknown. iceberg-go reports a lost
// compare-and-swap as ErrCommitFailed, but a failed requirement (the SQL
// catalog validates them before writing anything) as a plain error starting
// with "requirement failed", so the text is matched too.
func ClassifyCommit(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.ToLower(err.Error())
	if errors.Is(err, table.ErrCommitFailed) || errors.Is(err, table.ErrCommitDiverged) ||
		strings.Contains(msg, "requirement failed") {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
}

// RefRequirements asserts that every ref of meta still points where it
// did, and that the table is the same table: used for commits icewright sends
// to the catalog directly.
func RefRequirements(meta table.Metadata) []table.Requirement {
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID())}
	hasMain := false
	for name, ref := range meta.Refs() {
		id := ref.SnapshotID
		reqs = append(reqs, table.AssertRefSnapshotID(name, &id))
		hasMain = hasMain || name == table.MainBranch
	}
	if !hasMain {
		// main absent: assert it stays absent.
		reqs = append(reqs, table.AssertRefSnapshotID(table.MainBranch, nil))
	}
	return reqs
}

// GCEnabled reports the table's gc.enabled (absent means true, as in Java
// and iceberg-go).
func GCEnabled(props map[string]string) bool {
	v, ok := props[table.GCEnabledKey]
	return !ok || strings.EqualFold(strings.TrimSpace(v), "true")
}
