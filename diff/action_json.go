package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// actionHeader is the part of every action's JSON object; the alias keeps
// encoding/json from recursing into Action's own methods.
type actionHeader struct {
	Type        ActionType `json:"type"`
	Destructive bool       `json:"destructive"`
	Reason      string     `json:"reason"`
	Estimate    *Usage     `json:"estimate,omitempty"`
}

// MarshalJSON writes the action as one flat object (docs/design.md §5.2): type,
// destructive and reason beside the payload's fields.
func (a Action) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(actionHeader{Type: a.Type, Destructive: a.Destructive, Reason: a.Reason, Estimate: a.Estimate})
	if err != nil {
		return nil, err
	}
	if !a.Type.Known() {
		return nil, fmt.Errorf("unknown action type %q", a.Type)
	}
	body, err := json.Marshal(a.Payload())
	if err != nil {
		return nil, fmt.Errorf("marshal %s payload: %w", a.Type, err)
	}
	// A nil payload marshals as null; the object then has the header only.
	if bytes.Equal(body, []byte("null")) || bytes.Equal(body, []byte("{}")) {
		return head, nil
	}
	out := make([]byte, 0, len(head)+len(body))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	out = append(out, body[1:]...)
	return out, nil
}

// UnmarshalJSON reads the flat object back, filling the payload that the
// type names. An unknown type is an error: a plan from a newer icewright must
// not be applied by an older one that would silently drop a step.
func (a *Action) UnmarshalJSON(data []byte) error {
	var h actionHeader
	if err := json.Unmarshal(data, &h); err != nil {
		return fmt.Errorf("action: %w", err)
	}
	*a = Action{Type: h.Type, Destructive: h.Destructive, Reason: h.Reason, Estimate: h.Estimate}
	k, ok := KindOf(h.Type)
	if !ok {
		return fmt.Errorf("action: unknown type %q", h.Type)
	}
	target := k.alloc(a)
	if err := json.Unmarshal(data, target); err != nil {
		return fmt.Errorf("action %s: %w", h.Type, err)
	}
	return nil
}
