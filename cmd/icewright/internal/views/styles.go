// Package views renders what icewright commands produce: plans (human and
// JSON), apply results, inspect reports, explain tables and configuration
// diagnostics. It is the only importer of fatih/color. The human plan is
// rendered from the same diff.Plan value that is serialised as JSON, so the
// two cannot drift apart.
//
// Colour is a value passed in (Styles), never fatih/color's global NoColor:
// tests and the two output streams each decide for themselves.
//
// It may import diff (plans, observed state, the inspect/restore/demo
// reports), apply (results) and config (ranges, the secret rule); never
// providers (internal/layout).
package views

import "github.com/fatih/color"

// Styles are the colours used by every human view. Build one per output
// stream with NewStyles; with colour off every method is the identity.
type Styles struct {
	enabled bool
	bold    *color.Color
	dim     *color.Color
	add     *color.Color // +
	change  *color.Color // ~
	remove  *color.Color // -
	rewrite *color.Color // » (data rewritten, nothing lost)
	refuse  *color.Color // !
	warn    *color.Color
	ok      *color.Color
}

// NewStyles returns styles with colour on or off. Each color.Color is
// switched explicitly, so fatih/color's package-level NoColor (derived from
// the process's own stdout) never decides for us.
func NewStyles(enabled bool) *Styles {
	s := &Styles{
		enabled: enabled,
		bold:    color.New(color.Bold),
		dim:     color.New(color.Faint),
		add:     color.New(color.FgGreen),
		change:  color.New(color.FgYellow),
		remove:  color.New(color.FgRed),
		rewrite: color.New(color.FgCyan),
		refuse:  color.New(color.FgRed, color.Bold),
		warn:    color.New(color.FgYellow, color.Bold),
		ok:      color.New(color.FgGreen, color.Bold),
	}
	for _, c := range []*color.Color{s.bold, s.dim, s.add, s.change, s.remove, s.rewrite, s.refuse, s.warn, s.ok} {
		if enabled {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return s
}

// Enabled reports whether colour is on (hcl's diagnostic writer takes a
// bool of its own).
func (s *Styles) Enabled() bool { return s != nil && s.enabled }

func (s *Styles) paint(c *color.Color, text string) string {
	if s == nil || !s.enabled {
		return text
	}
	return c.Sprint(text)
}

func (s *Styles) Bold(t string) string    { return s.paint(s.bold, t) }
func (s *Styles) Dim(t string) string     { return s.paint(s.dim, t) }
func (s *Styles) Add(t string) string     { return s.paint(s.add, t) }
func (s *Styles) Change(t string) string  { return s.paint(s.change, t) }
func (s *Styles) Remove(t string) string  { return s.paint(s.remove, t) }
func (s *Styles) Rewrite(t string) string { return s.paint(s.rewrite, t) }
func (s *Styles) Refuse(t string) string  { return s.paint(s.refuse, t) }
func (s *Styles) Warn(t string) string    { return s.paint(s.warn, t) }
func (s *Styles) OK(t string) string      { return s.paint(s.ok, t) }
