package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// Masked is what a secret value is shown as, in every output.
const Masked = "(sensitive)"

// IsSecretKey reports whether a property name looks like it holds a secret
// (docs/design.md §3.2): its value is never shown and the saved plan keeps only its
// digest.
func IsSecretKey(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"secret", "password", "token", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// SecretDigest is what a plan keeps of a secret value: apply takes the value
// from the configuration and checks it against this. The prefix keeps the
// digest of a value from being the plain SHA-256 that precomputed tables
// list.
func SecretDigest(v string) string {
	sum := sha256.Sum256([]byte("icewright secret value\x00" + v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// minMaskLen is the shortest secret that text masking replaces: replacing
// every "on" or "1" in the output would garble it. Shorter secrets are
// still kept out of the plan (they are digested like any other).
const minMaskLen = 4

// Secrets are the secret values a configuration holds: values of sensitive
// variables, of secret-named catalog and table properties, and passwords in
// catalog URIs. Mask replaces them in any text; cmd runs every output stream
// through it, so an error message or a diagnostic that quotes a value
// (hcl's `with var.pw as "..."`) does not carry it out.
type Secrets struct {
	values []string // longest first, so a secret containing another is masked whole
}

func (s *Secrets) add(v string) {
	if len(v) < minMaskLen {
		return
	}
	for _, f := range secretForms(v) {
		if !slices.Contains(s.values, f) {
			s.values = append(s.values, f)
		}
	}
	slices.SortFunc(s.values, func(a, b string) int { return len(b) - len(a) })
}

// secretForms are the spellings of v that output can carry: as it is, and
// as it is written inside a JSON string (every -json output: encoding/json
// escapes ", \, control characters and, unless told not to, <, > and &),
// so that a secret with such a character is masked there too.
func secretForms(v string) []string {
	forms := []string{v}
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(v) != nil {
			continue
		}
		f := strings.TrimSuffix(b.String(), "\n")
		f = f[1 : len(f)-1] // the quotes
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	return forms
}

// addValue adds every string inside a cty value (a sensitive variable may
// be a list or map).
func (s *Secrets) addValue(v cty.Value) {
	if v.IsNull() || !v.IsKnown() {
		return
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		s.add(v.AsString())
	case ty == cty.Number:
		s.add(v.AsBigFloat().Text('f', -1))
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType() || ty.IsMapType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			s.addValue(e)
		}
	}
}

// addProperty adds a property's value when its name marks it secret. A
// REST "credential" is "client_id:client_secret"; the secret half alone is
// a secret too.
func (s *Secrets) addProperty(key, value string) {
	if !IsSecretKey(key) {
		return
	}
	s.add(value)
	if _, secret, ok := strings.Cut(value, ":"); ok {
		s.add(secret)
	}
}

// addURI adds the password a catalog URI carries, in URL form
// (postgres://u:pw@h/db) or keyword form (host=h password=pw).
func (s *Secrets) addURI(uri string) {
	if _, pw, ok := uriPassword(uri); ok {
		s.add(pw)
	}
}

// addURL adds the secrets of an endpoint URL whose form config does not
// know (an engine's remote): a password (addURI), and the value of every
// parameter named like a secret (IsSecretKey), whether written as a query
// (?token=X&...) or as Spark Connect's ;token=X;... parameters.
func (s *Secrets) addURL(u string) {
	s.addURI(u)
	for _, p := range strings.FieldsFunc(u, func(r rune) bool { return r == ';' || r == '?' || r == '&' }) {
		if k, v, ok := strings.Cut(p, "="); ok && IsSecretKey(strings.TrimSpace(k)) {
			s.add(v)
		}
	}
}

// Contains reports whether text holds any secret value.
func (s Secrets) Contains(text string) bool {
	for _, v := range s.values {
		if strings.Contains(text, v) {
			return true
		}
	}
	return false
}

// Mask replaces every secret value in text with Masked.
func (s Secrets) Mask(text string) string {
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Masked)
		}
	}
	return text
}

// MaxLen is the length of the longest secret (0 without any).
func (s Secrets) MaxLen() int {
	if len(s.values) == 0 {
		return 0
	}
	return len(s.values[0])
}

// RedactURI hides the password of a catalog URI, in URL form
// ("postgres://u:****@h/db") or keyword form ("host=h password=****"), for
// showing it: a PostgreSQL catalog's URI often carries its password.
func RedactURI(uri string) string {
	start, pw, ok := uriPassword(uri)
	if !ok {
		return uri
	}
	return uri[:start] + "****" + uri[start+len(pw):]
}

// uriPassword finds the password of a URI: its offset and text.
func uriPassword(uri string) (start int, pw string, ok bool) {
	if scheme, rest, isURL := strings.Cut(uri, "://"); isURL {
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		authority := rest[:end]
		at := strings.LastIndexByte(authority, '@')
		if at < 0 {
			return keywordPassword(uri)
		}
		user, pass, has := strings.Cut(authority[:at], ":")
		if !has {
			return keywordPassword(uri)
		}
		return len(scheme) + 3 + len(user) + 1, pass, pass != ""
	}
	return keywordPassword(uri)
}

// keywordPassword finds password=... in a keyword DSN or a URL query
// ("host=h password='p w'", "...?password=p&sslmode=...").
func keywordPassword(dsn string) (int, string, bool) {
	lower := strings.ToLower(dsn)
	for from := 0; ; {
		i := strings.Index(lower[from:], "password=")
		if i < 0 {
			return 0, "", false
		}
		i += from
		from = i + len("password=")
		if i > 0 && !strings.ContainsRune(" \t?&;", rune(dsn[i-1])) {
			continue // "xpassword=" is another key
		}
		v := dsn[from:]
		if strings.HasPrefix(v, "'") {
			if end := strings.IndexByte(v[1:], '\''); end >= 0 {
				return from + 1, v[1 : 1+end], end > 0
			}
			return from + 1, v[1:], len(v) > 1
		}
		end := strings.IndexAny(v, " \t&;")
		if end < 0 {
			end = len(v)
		}
		return from, v[:end], end > 0
	}
}
