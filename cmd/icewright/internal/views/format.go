package views

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/icewright/icewright/config"
)

// Count renders an integer with thousands separators: 1203 → "1,203".
func Count[T ~int | ~int64](n T) string {
	return config.GroupDigits(int64(n))
}

// Bytes renders a size for people, in binary units with one decimal:
// 3328599345 → "3.1 GiB", 47395635 → "45.2 MiB", 512 → "512 B".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n)
	i := -1
	for (v >= unit || v <= -unit) && i < len(units)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// Age renders a duration in the largest whole unit people use for
// retention: 41 days → "41d", 5h → "5h", 90s → "1m". Weeks are not used
// because "41d" reads better next to a policy written in days.
func Age(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd", int64(d/(24*time.Hour)))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int64(d/time.Hour))
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int64(d/time.Minute))
	default:
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
}

// AgeMs is Age for a millisecond count.
func AgeMs(ms int64) string { return Age(time.Duration(ms) * time.Millisecond) }

// plural picks the singular or plural noun for n (config.Plural).
func plural[T ~int | ~int64](n T, one, many string) string { return config.Plural(n, one, many) }

// countOf renders "1 table", "3 tables", "1,203 files" (config.CountOf).
func countOf[T ~int | ~int64](n T, one, many string) string { return config.CountOf(n, one, many) }

// CountOf is countOf for the commands.
func CountOf[T ~int | ~int64](n T, one, many string) string { return config.CountOf(n, one, many) }

// quoteList renders ["a", "b"] as Terraform renders a list of strings.
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
