package diff

import (
	"path"
	"strings"
)

// NormalizePath brings a file location to one spelling so that a listing and
// the referenced set compare equal (DESIGN §5.5 rule 8): schemes and
// authorities are mapped through the equal-scheme and equal-authority maps
// (keys may be comma-separated lists, as in Iceberg's DeleteOrphanFiles),
// s3a and s3n are s3, a local file is "file:///abs" whether written
// "/abs", "file:/abs" or "file:///abs", and "." and ".." segments and
// repeated slashes are cleaned. Cleaning can only merge two spellings into
// one, so it errs toward treating a listed file as referenced (kept).
// Relative paths stay relative.
func NormalizePath(p string, equalSchemes, equalAuthorities map[string]string) string {
	scheme, rest, ok := strings.Cut(p, ":")
	if !ok || !isScheme(scheme) {
		// No scheme: a local path. Only absolute paths are file:// URIs.
		if strings.HasPrefix(p, "/") {
			return "file://" + cleanAbs(p)
		}
		return path.Clean(p)
	}
	scheme = mapName(strings.ToLower(scheme), equalSchemes)
	// Hadoop's S3 connectors name the same storage; callers' maps extend this.
	if scheme == "s3a" || scheme == "s3n" {
		scheme = "s3"
	}
	var authority, p2 string
	if strings.HasPrefix(rest, "//") {
		authority, p2, _ = strings.Cut(rest[2:], "/")
		p2 = "/" + p2
	} else {
		p2 = rest // file:/x has no authority
	}
	if scheme == "file" && (authority == "localhost") {
		authority = ""
	}
	authority = mapName(authority, equalAuthorities)
	return scheme + "://" + authority + cleanAbs(p2)
}

// cleanAbs cleans an absolute path, keeping a trailing slash: prefixes
// ("s3://b/t/") and files must stay distinguishable.
func cleanAbs(p string) string {
	if isCleanAbs(p) {
		return p // the common case, without an allocation
	}
	c := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// isCleanAbs reports whether cleanAbs(p) == p: an absolute path with no
// empty, "." or ".." segment (a trailing slash is kept by cleanAbs).
func isCleanAbs(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 1; i < len(p); i++ {
		if p[i-1] != '/' {
			continue
		}
		// p[i:] starts a segment
		switch {
		case p[i] == '/':
			return false
		case p[i] == '.' && (i+1 == len(p) || p[i+1] == '/'):
			return false
		case p[i] == '.' && p[i+1] == '.' && (i+2 == len(p) || p[i+2] == '/'):
			return false
		}
	}
	return true
}

// mapName maps name through m, whose keys may list several names
// separated by commas.
func mapName(name string, m map[string]string) string {
	for k, v := range m {
		for _, alt := range strings.Split(k, ",") {
			if strings.TrimSpace(alt) == name {
				return v
			}
		}
	}
	return name
}

// isScheme reports whether s is a URI scheme (RFC 3986) of two or more
// characters; one letter is a Windows drive ("C:").
func isScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}
