package config

import (
	"fmt"
	"strconv"
	"strings"
)

// versionSatisfies checks a version against a constraint list in
// Terraform's syntax: ">= 0.1, < 2", "~> 0.3", "= 1.0.0", "!= 0.2". A
// development build (empty version or "dev") satisfies everything, so
// working on icewright does not need a release number.
func versionSatisfies(version, constraints string) (bool, error) {
	var checks []func([]int) bool
	for _, c := range strings.Split(constraints, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			return false, fmt.Errorf("empty constraint in %q", constraints)
		}
		op := "="
		for _, o := range []string{">=", "<=", "~>", "!=", ">", "<", "="} {
			if strings.HasPrefix(c, o) {
				op = o
				c = strings.TrimSpace(c[len(o):])
				break
			}
		}
		want, err := parseVersion(c)
		if err != nil {
			return false, fmt.Errorf("%q in %q: %w", c, constraints, err)
		}
		prec := len(want)
		checks = append(checks, func(have []int) bool {
			cmp := compareVersions(have, want)
			switch op {
			case ">=":
				return cmp >= 0
			case "<=":
				return cmp <= 0
			case ">":
				return cmp > 0
			case "<":
				return cmp < 0
			case "!=":
				return cmp != 0
			case "~>":
				// ~> 1.2 allows 1.x >= 1.2; ~> 1.2.3 allows 1.2.x >= 1.2.3.
				if cmp < 0 {
					return false
				}
				n := prec - 1
				if n < 1 {
					n = 1
				}
				for i := 0; i < n; i++ {
					if at(have, i) != at(want, i) {
						return false
					}
				}
				return true
			default:
				return cmp == 0
			}
		})
	}
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	if v == "" || v == "dev" || strings.HasPrefix(v, "dev") {
		return true, nil
	}
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i] // pre-release and build metadata do not change the comparison here
	}
	have, err := parseVersion(v)
	if err != nil {
		return false, fmt.Errorf("icewright version %q: %w", version, err)
	}
	for _, ok := range checks {
		if !ok(have) {
			return false, nil
		}
	}
	return true, nil
}

func parseVersion(s string) ([]int, error) {
	s = strings.TrimPrefix(s, "v")
	parts := strings.Split(s, ".")
	if len(parts) > 3 || s == "" {
		return nil, fmt.Errorf("not a version (want MAJOR[.MINOR[.PATCH]])")
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("not a version (want MAJOR[.MINOR[.PATCH]])")
		}
		out[i] = n
	}
	return out, nil
}

func at(v []int, i int) int {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func compareVersions(a, b []int) int {
	for i := 0; i < 3; i++ {
		if at(a, i) != at(b, i) {
			if at(a, i) < at(b, i) {
				return -1
			}
			return 1
		}
	}
	return 0
}
