package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// sizeUnits maps a unit (lower-cased) to its multiplier. Both SI (KB = 1000)
// and IEC (KiB = 1024) units are accepted because table properties and
// engine docs use both; a bare "B" or no unit means bytes.
var sizeUnits = map[string]int64{
	"":    1,
	"b":   1,
	"kb":  1000,
	"mb":  1000 * 1000,
	"gb":  1000 * 1000 * 1000,
	"tb":  1000 * 1000 * 1000 * 1000,
	"pb":  1000 * 1000 * 1000 * 1000 * 1000,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
	"pib": 1 << 50,
}

// ParseSize parses a byte size such as "512MiB", "1GB", "64KiB", "1.5GiB" or
// "1048576". The result must be a whole, non-negative number of bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty size")
	}
	num, written := splitSize(t)
	unit := strings.ToLower(written)
	if num == "" {
		return 0, fmt.Errorf("%q does not start with a number", s)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown size unit %q in %q (use B, KiB, MiB, GiB, TiB, or the decimal KB, MB, GB, TB)", written, s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q is out of range", s)
		}
		if n != 0 && mult > math.MaxInt64/n {
			return 0, fmt.Errorf("size %q is out of range", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", num)
	}
	v := f * float64(mult)
	// 2^63 is exactly representable; anything at or above it overflows int64.
	if v >= 9.223372036854775807e18 {
		return 0, fmt.Errorf("size %q is out of range", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	return int64(v), nil
}

// splitSize splits a size into its number and its unit as written.
func splitSize(s string) (num, unit string) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	return t[:i], strings.TrimSpace(t[i:])
}

// decimalToIEC maps a decimal (SI) unit to the binary unit usually meant.
var decimalToIEC = map[string]string{"kb": "KiB", "mb": "MiB", "gb": "GiB", "tb": "TiB", "pb": "PiB"}

// Plural picks the singular or the plural noun for n: every message that
// counts something ("1 partition", "16 data files") picks its noun here.
func Plural[T ~int | ~int64](n T, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CountOf writes n with its noun: "1 partition", "1,203 files".
func CountOf[T ~int | ~int64](n T, one, many string) string {
	return GroupDigits(int64(n)) + " " + Plural(n, one, many)
}

// GroupDigits writes n with thousands separators: 128,000,000 (the
// views count with it too).
func GroupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatSize renders a byte count for people: "3.1 GiB", "45.2 MiB",
// "512 MiB", "900 B". It is lossy; use FormatSizeExact where the value must
// round-trip through ParseSize.
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 { // includes negatives, which no real size has
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	u := 0
	// Divide while the value would print as 1024 or more, so 1023.97 MiB
	// reads "1 GiB" rather than "1024 MiB".
	for v >= 1023.95 && u < len(units)-1 {
		v /= 1024
		u++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[u]
}

// FormatSizeExact renders a size in the unit, IEC or SI, that divides it
// into the smallest number, so that ParseSize(FormatSizeExact(n)) == n and
// the value reads as it was probably written ("512MiB", "1TB", "1000001").
func FormatSizeExact(n int64) string {
	if n <= 0 {
		return strconv.FormatInt(n, 10)
	}
	best, bestUnit := n, ""
	for _, u := range []struct {
		name string
		mult int64
	}{
		{"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
		{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
	} {
		if n%u.mult == 0 && n/u.mult < best {
			best, bestUnit = n/u.mult, u.name
		}
	}
	return strconv.FormatInt(best, 10) + bestUnit
}

// durationUnits are Go's units plus days and weeks, which retention policies
// are naturally written in. A day is always 24h: policies are about ages,
// not calendar dates.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond,
	"us": time.Microsecond,
	"µs": time.Microsecond,
	"μs": time.Microsecond,
	"ms": time.Millisecond,
	"s":  time.Second,
	"m":  time.Minute,
	"h":  time.Hour,
	"d":  24 * time.Hour,
	"w":  7 * 24 * time.Hour,
}

// ParseDuration parses a non-negative duration such as "30s", "90m", "36h",
// "1h30m", "5d" or "2w". "0" is accepted.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty duration")
	}
	if t == "0" {
		return 0, nil
	}
	if t[0] == '-' {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	t = strings.TrimPrefix(t, "+")
	var total float64
	rest := t
	if rest == "" {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%q is not a duration: expected a number at %q", s, rest)
		}
		num := rest[:i]
		rest = rest[i:]
		j := 0
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		unit := rest[:j]
		rest = rest[j:]
		if unit == "" {
			return 0, fmt.Errorf("%q is not a duration: missing unit after %s (use s, m, h, d or w)", s, num)
		}
		mult, ok := durationUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%q is not a duration: unknown unit %q (use ns, us, ms, s, m, h, d or w)", s, unit)
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration: bad number %q", s, num)
		}
		total += f * float64(mult)
		if total >= float64(math.MaxInt64) {
			return 0, fmt.Errorf("duration %q is out of range", s)
		}
	}
	return time.Duration(math.Round(total)), nil
}

// FormatDuration renders a duration in the largest unit that divides it
// exactly, so it reads as written and round-trips through ParseDuration:
// "2d", "36h", "90m", "1500ms". Days rather than weeks: "14d" is how
// retention is usually discussed.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	neg := ""
	if d < 0 {
		neg = "-"
		if d == math.MinInt64 {
			return d.String()
		}
		d = -d
	}
	for _, u := range []struct {
		name string
		unit time.Duration
	}{
		{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second},
		{"ms", time.Millisecond}, {"us", time.Microsecond},
	} {
		if d%u.unit == 0 {
			return neg + strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return neg + strconv.FormatInt(int64(d), 10) + "ns"
}
