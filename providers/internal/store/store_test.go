package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// A lost compare-and-swap and a failed requirement are conflicts (nothing
// landed: retry); anything else after the request left is an unknown
// outcome. The cause stays reachable.
func TestClassifyCommit(t *testing.T) {
	if ClassifyCommit(nil) != nil {
		t.Fatal("nil classified")
	}
	cases := []struct {
		err  error
		want error
	}{
		{fmt.Errorf("commit: %w", table.ErrCommitFailed), ErrConflict},
		{fmt.Errorf("commit: %w", table.ErrCommitDiverged), ErrConflict},
		{errors.New("Requirement failed: branch main has changed"), ErrConflict},
		{errors.New("read tcp: i/o timeout"), ErrCommitUnknown},
	}
	for _, c := range cases {
		got := ClassifyCommit(c.err)
		if !errors.Is(got, c.want) || !errors.Is(got, c.err) {
			t.Errorf("%v: got %v, want %v wrapping it", c.err, got, c.want)
		}
		other := ErrConflict
		if c.want == ErrConflict {
			other = ErrCommitUnknown
		}
		if errors.Is(got, other) {
			t.Errorf("%v: classified as both", c.err)
		}
	}
}

// gc.enabled is true unless set to something other than true.
func TestGCEnabled(t *testing.T) {
	for props, want := range map[string]bool{"": true, "true": true, " TRUE ": true, "false": false, "no": false} {
		m := map[string]string{}
		if props != "" {
			m[table.GCEnabledKey] = props
		}
		if got := GCEnabled(m); got != want {
			t.Errorf("gc.enabled=%q: %v, want %v", props, got, want)
		}
	}
}
