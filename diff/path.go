package diff

import (
	"path"
	"strings"
)

// NormalizePath brings a file location to one spelling so that a listing and
// the referenced set compare equal (docs/design.md §5.5 rule 8). It is the only path
// normaliser: plan, apply's re-checks, expiry and quarantine all use it.
//
// Schemes and authorities are mapped through the equal-scheme and
// equal-authority maps (keys may be comma-separated lists, as in Iceberg's
// DeleteOrphanFiles), s3a and s3n are s3, and "." and ".." segments and
// repeated slashes are cleaned. Cleaning can only merge two spellings into
// one, so it errs toward treating a listed file as referenced (kept).
// Relative paths stay relative.
//
// The key names the object the storage layer actually touches, which
// depends on the scheme, as iceberg-go's IO resolves it:
//   - a local file is "file:///abs" whether written "/abs", "file:/abs" or
//     "file:///abs". A file: URI is a URI: its percent-escapes are decoded
//     and a "?" or "#" ends its path (iceberg-go's LocalFS opens
//     url.Parse's Path), while a bare "/abs" is a literal name. So
//     "file:///t/p=50%25" and "/t/p=50%" are one file, and "/t/pct%41" is
//     not "/t/pctA". The key spells the name back as a file URI ('%', '?',
//     '#' and control bytes escaped, nothing else), so a key is itself a
//     location of the same file and normalising it again changes nothing.
//   - object stores (s3, gs, abfs, ...) take the key raw: object names are
//     opaque strings and iceberg-go's blob IO never unescapes them.
func NormalizePath(p string, equalSchemes, equalAuthorities map[string]string) string {
	scheme, authority, p2, ok := splitURI(p, equalSchemes)
	if !ok {
		// No scheme: a local path, taken literally. Only absolute paths are
		// file:// URIs.
		if strings.HasPrefix(p, "/") {
			return "file://" + escapeLocal(cleanAbs(p))
		}
		return path.Clean(p)
	}
	// Hadoop's S3 connectors name the same storage; callers' maps extend this.
	if scheme == "s3a" || scheme == "s3n" {
		scheme = "s3"
	}
	if scheme == "file" {
		return "file://" + fileAuthority(authority, equalAuthorities) + escapeLocal(cleanAbs(fileURIPath(p2)))
	}
	authority = mapName(authority, equalAuthorities)
	return scheme + "://" + authority + cleanAbs(p2)
}

// splitURI splits a location with a scheme into the scheme (lower case,
// mapped through equalSchemes), the authority ("" for "scheme:/x") and
// the path; ok is false when p has no scheme.
func splitURI(p string, equalSchemes map[string]string) (scheme, authority, path string, ok bool) {
	scheme, rest, ok := strings.Cut(p, ":")
	if !ok || !isScheme(scheme) {
		return "", "", "", false
	}
	scheme = mapName(strings.ToLower(scheme), equalSchemes)
	if strings.HasPrefix(rest, "//") {
		authority, path, _ = strings.Cut(rest[2:], "/")
		return scheme, authority, "/" + path, true
	}
	return scheme, "", rest, true // file:/x has no authority
}

// fileAuthority is a file: URI's authority in a key: "localhost" is the
// local host, as no authority is.
func fileAuthority(authority string, equalAuthorities map[string]string) string {
	if authority == "localhost" {
		authority = ""
	}
	return mapName(authority, equalAuthorities)
}

// LiteralKey is the key of the literal name of a location that names two
// local files: a file: URI whose path changes when decoded (percent-escapes,
// or a '?' or '#'). iceberg-go v0.7.0's local IO opens the decoded name,
// whose key NormalizePath returns; Java (Hadoop Path), PyIceberg, Spark,
// Trino and DuckDB open the path as written, and Java and PyIceberg write
// partition directories with escaped values (ts=2023-08-22T09%3A15%3A20), so
// on a table they wrote the file is under the literal name. ok is false for
// every other location (object keys, bare paths, URIs without escapes),
// which names one file to every reader.
//
// Which of the two names is the table's cannot be told from the location
// (docs/design.md §5.5 rule 8): icewright rewrites no such file, deletes
// neither name on the location's word alone, and keeps both names out of an
// orphan sweep. The key is spelled as NormalizePath spells keys, with the
// same equal_schemes and equal_authorities, so it compares with a listing.
func LiteralKey(p string, equalSchemes, equalAuthorities map[string]string) (key string, ok bool) {
	if !decodable(p) {
		// fileURIPath would return the path as it is: one name. Checked
		// first, since every referenced file of a scan comes here.
		return "", false
	}
	scheme, authority, p2, ok := splitURI(p, equalSchemes)
	if !ok || scheme != "file" {
		return "", false
	}
	literal := cleanAbs(p2)
	if cleanAbs(fileURIPath(p2)) == literal {
		return "", false
	}
	return "file://" + fileAuthority(authority, equalAuthorities) + escapeLocal(literal), true
}

// decodable reports whether p holds a byte url.Parse would read as more
// than itself in a path ('%' starts an escape, '?' a query, '#' a
// fragment). Three IndexByte calls, which are vectorised, instead of one
// IndexAny, which is not: every referenced file of an orphan scan and of
// the observation is asked, twice (NormalizePath, LiteralKey).
func decodable(p string) bool {
	return strings.IndexByte(p, '%') >= 0 || strings.IndexByte(p, '?') >= 0 || strings.IndexByte(p, '#') >= 0
}

// fileURIPath is the local name a file: URI's path part stands for, as
// url.Parse (and so iceberg-go's LocalFS) reads it: the fragment and query
// are not part of it, and percent-escapes are decoded. A path that does
// not decode cannot be opened through a URI at all; it is kept as written,
// so that it still matches a listed file with that literal name (kept).
func fileURIPath(p string) string {
	if !decodable(p) {
		return p
	}
	raw := p
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	dec, ok := unescapePercent(raw)
	if !ok {
		return p
	}
	return dec
}

// unescapePercent decodes %XX escapes as url.PathUnescape does ('+' stays
// '+'); ok is false for a '%' not followed by two hex digits. diff may not
// import net/url (purity_test), and this is all of it that is needed.
func unescapePercent(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// escapeLocal spells a local name as a file URI path: only the bytes a URI
// parser would read differently are escaped, so keys stay readable.
func escapeLocal(p string) string {
	i := 0
	for i < len(p) && !needsEscape(p[i]) {
		i++
	}
	if i == len(p) {
		return p // the common case, without an allocation
	}
	const hex = "0123456789ABCDEF"
	var sb strings.Builder
	sb.Grow(len(p) + 8)
	sb.WriteString(p[:i])
	for ; i < len(p); i++ {
		c := p[i]
		if needsEscape(c) {
			sb.WriteByte('%')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&15])
			continue
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

func needsEscape(c byte) bool {
	return c == '%' || c == '?' || c == '#' || c < 0x20 || c == 0x7f
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
