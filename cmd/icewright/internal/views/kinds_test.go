package views

import (
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
)

// TestEveryKindHasAView: each action kind of diff has its own sentence, so
// a new kind cannot reach a reviewer as a bare type name.
func TestEveryKindHasAView(t *testing.T) {
	for _, typ := range diff.Kinds() {
		view, ok := actionViews[typ]
		if !ok {
			t.Errorf("%s has no view", typ)
			continue
		}
		if _, ok := view(&diff.Action{Type: typ}, time.Time{}, NewStyles(false)); ok {
			t.Errorf("%s: the view renders an action without its payload", typ)
		}
	}
	for typ := range actionViews {
		if !typ.Known() {
			t.Errorf("view for %s, which diff does not know", typ)
		}
	}
}
