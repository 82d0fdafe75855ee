package providers

import (
	"testing"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// TestEveryKindHasAnExecutor: each action kind of diff runs somewhere, so
// a new kind fails here instead of at a user's apply.
func TestEveryKindHasAnExecutor(t *testing.T) {
	s := Open(&config.Config{}, Options{})
	for _, typ := range diff.Kinds() {
		if e, ok := s.Executor(typ); !ok || e == nil {
			t.Errorf("%s has no executor", typ)
		}
	}
	for typ := range s.executors() {
		if !typ.Known() {
			t.Errorf("executor for %s, which diff does not know", typ)
		}
	}
	if e, ok := s.Executor("drop_table"); ok || e != nil {
		t.Error("an unknown kind has an executor")
	}
}
