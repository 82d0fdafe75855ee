package diff

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// fileLine renders a range as "main.icewright.hcl:40", or "" for a zero range.
// Only the base name is kept: the configuration is one directory, so it is
// unambiguous, and plans stay stable across checkouts.
func fileLine(r hcl.Range) string {
	if r.Filename == "" {
		return ""
	}
	name := r.Filename
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return fmt.Sprintf("%s:%d", name, r.Start.Line)
}

// reason explains an action for people: the attribute, its value and where
// it was set. A defaulted value points at the block that asked for it.
func reason(attr, value string, origin, block hcl.Range) string {
	switch {
	case origin.Filename != "":
		return fmt.Sprintf("%s = %s (%s)", attr, value, fileLine(origin))
	case block.Filename != "":
		return fmt.Sprintf("%s = %s (default; block at %s)", attr, value, fileLine(block))
	default:
		return fmt.Sprintf("%s = %s (default)", attr, value)
	}
}

// formatAge renders an age for a message, rounded down to a readable unit.
func formatAge(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d >= 24*time.Hour:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d >= time.Hour:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	default:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
}

func quote(s string) string { return strconv.Quote(s) }
