package config

import (
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// catalogTypes are the values of a catalog block's type: config's half of
// each catalog type's descriptor (its name, the attributes of catalogAttrs,
// decodeCatalog's checks); the other half (open, metadata naming, doctor's
// probes) is providers/catalogs' Types, whose test holds the two lists
// equal.
var catalogTypes = []string{"sql", "rest", "glue", "hive", "hadoop"}

// CatalogTypes are the values a catalog block's type may have.
func CatalogTypes() []string { return slices.Clone(catalogTypes) }

func (l *loader) decodeCatalog(b *hcl.Block) {
	name := b.Labels[0]
	if name == "" || strings.ContainsAny(name, ".* \t") {
		l.errorf(b.LabelRanges[0].Ptr(), "Invalid catalog name", "%q cannot be a catalog name: it is the first level of table addresses, so it cannot be empty or contain dots, stars or spaces.", name)
		return
	}
	for _, c := range l.cfg.Catalogs {
		if c.Name == name {
			l.errorf(b.DefRange.Ptr(), "Duplicate catalog", "A catalog named %q was already declared at %s.", name, c.DeclRange)
			return
		}
	}
	content, diags := b.Body.Content(catalogSchema)
	l.diags = append(l.diags, diags...)
	c := &Catalog{Name: name, DeclRange: b.DefRange, Properties: map[string]string{}}
	if a, ok := content.Attributes["type"]; ok {
		if s, ok := l.evalString(a); ok {
			c.Type = s
			if !contains(catalogTypes, s) {
				detail := fmt.Sprintf("%q is not a catalog type; use one of %s.", s, quoteList(catalogTypes))
				if sug := nameSuggestion(s, catalogTypes); sug != "" {
					detail += fmt.Sprintf(" Did you mean %q?", sug)
				}
				l.diags = append(l.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid catalog type", Detail: detail, Subject: a.Expr.Range().Ptr()})
			}
		}
	}
	uriFailed := false // its own error said why (an unset env())
	if a, ok := content.Attributes["uri"]; ok {
		s, ok := l.evalString(a)
		uriFailed = !ok
		if ok {
			l.cfg.Secrets.addURI(s)
			uri, err := resolveURI(s, l.absDir)
			if err != nil {
				l.errorf(a.Expr.Range().Ptr(), "Invalid catalog uri", "%s.", err)
			}
			c.URI = uri
		}
	}
	if a, ok := content.Attributes["warehouse"]; ok {
		if s, ok := l.evalString(a); ok {
			c.Warehouse = ResolveWarehouse(s, l.absDir)
		}
	}
	if a, ok := content.Attributes["properties"]; ok {
		v, ok := l.evalAttr(a)
		if ok {
			m, err := toStringMap(v)
			if err != nil {
				l.errorf(a.Expr.Range().Ptr(), "Incorrect attribute value type", "properties must be a map of strings: %s.", err)
			} else {
				c.Properties = m
				for k, v := range m {
					l.cfg.Secrets.addProperty(k, v)
				}
			}
		}
	}
	if c.Type == "sql" && c.URI == "" && !uriFailed {
		l.errorf(b.DefRange.Ptr(), "Missing catalog uri", "A sql catalog needs uri = \"sqlite:PATH\" or a postgres:// URI.")
	}
	l.cfg.Catalogs = append(l.cfg.Catalogs, c)
}

// resolveURI makes a relative sqlite path absolute against the
// configuration directory, so the catalog is the same wherever icewright runs
// from. SQLAlchemy's spellings are accepted (sqlite:///rel, sqlite:////abs);
// the result is always sqlite:/abs/path. Other URIs are kept as written.
func resolveURI(uri, dir string) (string, error) {
	rest, ok := strings.CutPrefix(uri, "sqlite:")
	if !ok {
		return uri, nil
	}
	path, query, _ := strings.Cut(rest, "?")
	if query != "" {
		query = "?" + query
	}
	if p, ok := strings.CutPrefix(path, "//"); ok {
		// sqlite://<host>/<path> in URL form: SQLAlchemy leaves the host empty,
		// so "///rel" is relative and "////abs" absolute.
		if !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("%q: a sqlite URI has no host; use sqlite:PATH, sqlite:/abs/path or sqlite:////abs/path", uri)
		}
		path = p[1:]
		if path == "" {
			return "", fmt.Errorf("%q has no database path", uri)
		}
		if strings.HasPrefix(path, "/") {
			return "sqlite:" + filepath.Clean(path) + query, nil
		}
	}
	if path == "" {
		return "", fmt.Errorf("%q has no database path", uri)
	}
	if path == ":memory:" {
		return "sqlite:" + path + query, nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	return "sqlite:" + filepath.Clean(path) + query, nil
}

// ResolveWarehouse turns a relative or absolute local path into a file://
// URI against the configuration directory; URIs with a scheme are kept.
// Config applies it on load; providers/catalogs again for a Catalog built
// by hand (tests), so there is one rule.
func ResolveWarehouse(w, dir string) string {
	if w == "" || strings.Contains(w, "://") || strings.HasPrefix(w, "file:") {
		return w
	}
	p := w
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return "file://" + filepath.ToSlash(filepath.Clean(p))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// evalAttr evaluates an attribute. ok is false when it failed (the error is
// recorded), is null (unset, as in Terraform) or depends on a value that
// already failed.
func (l *loader) evalAttr(a *hcl.Attribute) (cty.Value, bool) {
	v, diags := a.Expr.Value(l.ctx)
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() || v.IsNull() || !v.IsWhollyKnown() {
		return cty.NilVal, false
	}
	return v, true
}

func (l *loader) evalString(a *hcl.Attribute) (string, bool) {
	v, ok := l.evalAttr(a)
	if !ok {
		return "", false
	}
	cv, err := convert.Convert(v, cty.String)
	if err != nil {
		l.errorf(a.Expr.Range().Ptr(), "Incorrect attribute value type", "%s must be a string, got %s.", a.Name, v.Type().FriendlyName())
		return "", false
	}
	return cv.AsString(), true
}

func toStringMap(v cty.Value) (map[string]string, error) {
	cv, err := convert.Convert(v, cty.Map(cty.String))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for it := cv.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() {
			return nil, fmt.Errorf("the value of %q is null", k.AsString())
		}
		out[k.AsString()] = e.AsString()
	}
	return out, nil
}

func toStringList(v cty.Value) ([]string, error) {
	cv, err := convert.Convert(v, cty.List(cty.String))
	if err != nil {
		return nil, err
	}
	out := []string{}
	for it := cv.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			return nil, fmt.Errorf("the list has a null element")
		}
		out = append(out, e.AsString())
	}
	return out, nil
}

// bodyKind says which block a policy body sits in; each allows a few extra
// attributes.
type bodyKind int

const (
	bodyPolicy bodyKind = iota
	bodyTable
	bodyTables
)

// bodySchemas are the schemas of a kind of body and of its nested blocks,
// built once per kind and shared (hcl only reads them): a configuration can
// have hundreds of thousands of table blocks.
func (l *loader) bodySchemas(kind bodyKind) (*hcl.BodySchema, map[string]*hcl.BodySchema) {
	s := bodySchemaTable()[kind]
	return s.top, s.nested
}

type bodySchemaSet struct {
	top    *hcl.BodySchema
	nested map[string]*hcl.BodySchema
}

var bodySchemaTable = sync.OnceValue(func() []bodySchemaSet {
	var out []bodySchemaSet
	for kind := bodyPolicy; kind <= bodyTables; kind++ {
		top, nested := buildBodySchemas(kind)
		out = append(out, bodySchemaSet{top, nested})
	}
	return out
})

func buildBodySchemas(kind bodyKind) (*hcl.BodySchema, map[string]*hcl.BodySchema) {
	top := &hcl.BodySchema{}
	nested := map[string]*hcl.BodySchema{}
	for _, b := range nestedBlocks {
		top.Blocks = append(top.Blocks, hcl.BlockHeaderSchema{Type: b})
		nested[b] = &hcl.BodySchema{}
	}
	for _, f := range policyFields() {
		if f.block == "" {
			top.Attributes = append(top.Attributes, hcl.AttributeSchema{Name: f.name})
		} else {
			nested[f.block].Attributes = append(nested[f.block].Attributes, hcl.AttributeSchema{Name: f.name})
		}
	}
	for _, a := range bodyAttrs {
		for _, k := range a.in {
			if k == kind {
				top.Attributes = append(top.Attributes, hcl.AttributeSchema{Name: a.name})
			}
		}
	}
	return top, nested
}

// decodeBody decodes the attributes and nested blocks shared by policy,
// table and tables blocks. blockName is recorded on every Setting for
// explain. It returns the content so callers can read their own extras.
func (l *loader) decodeBody(body hcl.Body, kind bodyKind, blockName string) (PolicyBody, *hcl.BodyContent) {
	var pb PolicyBody
	content := l.decodeBodyInto(&pb, body, kind, blockName)
	return pb, content
}

// decodeBodyInto is decodeBody into *pb, which must be zero: readTable
// reuses one for every table block (a PolicyBody is 4.6 KB).
func (l *loader) decodeBodyInto(pb *PolicyBody, body hcl.Body, kind bodyKind, blockName string) *hcl.BodyContent {
	top, nested := l.bodySchemas(kind)
	content, diags := body.Content(top)
	l.diags = append(l.diags, diags...)
	if content == nil {
		return &hcl.BodyContent{Attributes: hcl.Attributes{}}
	}
	attrsByBlock := map[string]hcl.Attributes{"": content.Attributes}
	seen := map[string]*hcl.Block{}
	for _, blk := range content.Blocks {
		if prev, ok := seen[blk.Type]; ok {
			l.errorf(blk.DefRange.Ptr(), "Duplicate "+blk.Type+" block", "A %s block was already declared at %s; declare it once per block.", blk.Type, prev.DefRange)
			continue
		}
		seen[blk.Type] = blk
		declared, rng := blockState(pb, blk.Type)
		*declared, *rng = true, blk.DefRange
		c, diags := blk.Body.Content(nested[blk.Type])
		l.diags = append(l.diags, diags...)
		if c != nil {
			attrsByBlock[blk.Type] = c.Attributes
		}
	}
	for _, f := range policyFields() {
		attrs := attrsByBlock[f.block]
		a, ok := attrs[f.name]
		if !ok {
			continue
		}
		l.decodeField(f, a, pb, blockName)
	}
	if a, ok := content.Attributes["properties"]; ok {
		l.decodeProperties(a, pb, blockName)
	}
	return content
}

// decodeField evaluates one attribute into its Setting.
func (l *loader) decodeField(f fieldDesc, a *hcl.Attribute, pb *PolicyBody, blockName string) {
	v, ok := l.evalAttr(a)
	if !ok {
		return
	}
	val, diag := convertField(f, a, v)
	if diag != nil {
		l.diags = append(l.diags, diag)
		return
	}
	if f.check != nil {
		if p := f.check(val); p != nil {
			d := &hcl.Diagnostic{Severity: p.severity, Summary: p.summary, Detail: p.detail, Subject: a.Expr.Range().Ptr(), Context: a.Range.Ptr()}
			if p.severity == hcl.DiagWarning {
				d = lintWarning(p.code, d.Subject, p.summary, p.detail)
				d.Context = a.Range.Ptr()
			}
			l.diags = append(l.diags, d)
			if p.severity == hcl.DiagError {
				return
			}
		}
	}
	if f.kind == kindSize && v.Type() == cty.String {
		if d := decimalSizeWarning(a, v.AsString(), val.(int64)); d != nil {
			l.diags = append(l.diags, d)
		}
	}
	origin := a.Range
	switch p := f.get(pb).(type) {
	case *Setting[int64]:
		*p = Setting[int64]{Value: val.(int64), Set: true, Origin: origin, Block: blockName}
	case *Setting[int]:
		*p = Setting[int]{Value: val.(int), Set: true, Origin: origin, Block: blockName}
	case *Setting[float64]:
		*p = Setting[float64]{Value: val.(float64), Set: true, Origin: origin, Block: blockName}
	case *Setting[bool]:
		*p = Setting[bool]{Value: val.(bool), Set: true, Origin: origin, Block: blockName}
	case *Setting[string]:
		*p = Setting[string]{Value: val.(string), Set: true, Origin: origin, Block: blockName}
	case *Setting[time.Duration]:
		*p = Setting[time.Duration]{Value: val.(time.Duration), Set: true, Origin: origin, Block: blockName}
	case *Setting[[]string]:
		*p = Setting[[]string]{Value: val.([]string), Set: true, Origin: origin, Block: blockName}
	case *Setting[map[string]string]:
		*p = Setting[map[string]string]{Value: val.(map[string]string), Set: true, Origin: origin, Block: blockName}
	case *Setting[[]SortField]:
		*p = Setting[[]SortField]{Value: val.([]SortField), Set: true, Origin: origin, Block: blockName}
	default:
		panic(fmt.Sprintf("config: field %s has unhandled setting type %T", f.path(), p)) // programming error in policyFields
	}
}

// decimalSizeWarning: "128MB" is 128,000,000 bytes, which is rarely what
// was meant (Iceberg's and the engines' defaults are powers of two, and
// they spell them MB), so a decimal unit is accepted but said aloud.
func decimalSizeWarning(a *hcl.Attribute, written string, n int64) *hcl.Diagnostic {
	num, unit := splitSize(written)
	iec, ok := decimalToIEC[strings.ToLower(unit)]
	if !ok {
		return nil
	}
	detail := fmt.Sprintf("%s = %q is %s bytes: %s is a decimal unit (powers of 1000).", a.Name, written, GroupDigits(n), unit)
	if m, err := ParseSize(num + iec); err == nil {
		detail += fmt.Sprintf(" If %s%s (%s bytes) was meant, write %q.", num, iec, GroupDigits(m), num+iec)
	}
	detail += fmt.Sprintf(" To keep %s bytes without this warning, write %d.", GroupDigits(n), n)
	d := lintWarning(LintDecimalSize, a.Expr.Range().Ptr(), "Decimal size unit", detail)
	d.Context = a.Range.Ptr()
	return d
}

func typeError(a *hcl.Attribute, want string, v cty.Value) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Incorrect attribute value type",
		Detail:   fmt.Sprintf("%s must be %s, got %s.", a.Name, want, v.Type().FriendlyName()),
		Subject:  a.Expr.Range().Ptr(),
		Context:  a.Range.Ptr(),
	}
}

func valueError(a *hcl.Attribute, summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: a.Expr.Range().Ptr(), Context: a.Range.Ptr()}
}

// convertField turns a cty value into the Go value of a field's kind.
func convertField(f fieldDesc, a *hcl.Attribute, v cty.Value) (any, *hcl.Diagnostic) {
	switch f.kind {
	case kindSize:
		if v.Type() == cty.Number {
			n, ok := wholeNumber(v)
			if !ok || n < 0 {
				return nil, valueError(a, "Invalid size", fmt.Sprintf("%s must be a whole, non-negative number of bytes or a string such as \"512MiB\".", a.Name))
			}
			return n, nil
		}
		if v.Type() != cty.String {
			return nil, typeError(a, "a size such as \"512MiB\"", v)
		}
		n, err := ParseSize(v.AsString())
		if err != nil {
			return nil, valueError(a, "Invalid size", fmt.Sprintf("%s. Write a size as a whole number of bytes or a number with a unit: \"512MiB\", \"1GiB\", \"64KiB\".", err))
		}
		return n, nil
	case kindDuration:
		if v.Type() != cty.String {
			return nil, typeError(a, "a duration string such as \"5d\"", v)
		}
		d, err := ParseDuration(v.AsString())
		if err != nil {
			return nil, valueError(a, "Invalid duration", fmt.Sprintf("%s. Write a duration with units: \"30s\", \"90m\", \"36h\", \"5d\", \"2w\".", err))
		}
		return d, nil
	case kindInt:
		cv, err := convert.Convert(v, cty.Number)
		if err != nil {
			return nil, typeError(a, "a whole number", v)
		}
		n, ok := wholeNumber(cv)
		if !ok || n > 1<<31-1 || n < -(1<<31) {
			return nil, valueError(a, "Invalid number", fmt.Sprintf("%s must be a whole number.", a.Name))
		}
		return int(n), nil
	case kindFloat:
		cv, err := convert.Convert(v, cty.Number)
		if err != nil {
			return nil, typeError(a, "a number", v)
		}
		fv, _ := cv.AsBigFloat().Float64()
		return fv, nil
	case kindBool:
		cv, err := convert.Convert(v, cty.Bool)
		if err != nil {
			return nil, typeError(a, "true or false", v)
		}
		return cv.True(), nil
	case kindString:
		if !v.Type().IsPrimitiveType() {
			return nil, typeError(a, "a string", v)
		}
		cv, err := convert.Convert(v, cty.String)
		if err != nil {
			return nil, typeError(a, "a string", v)
		}
		return cv.AsString(), nil
	case kindList:
		ss, err := toStringList(v)
		if err != nil {
			return nil, typeError(a, "a list of strings", v)
		}
		return ss, nil
	case kindMap:
		m, err := toStringMap(v)
		if err != nil {
			return nil, typeError(a, "a map of strings", v)
		}
		if a.Name == "equal_schemes" || a.Name == "equal_authorities" {
			m = expandEquivalences(m)
		}
		return m, nil
	case kindSort:
		terms, err := toStringList(v)
		if err != nil {
			return nil, typeError(a, "a list of sort terms such as [\"event_ts desc\", \"bucket(16, user_id)\"]", v)
		}
		elems, _ := hcl.ExprList(a.Expr)
		fields := make([]SortField, 0, len(terms))
		for i, t := range terms {
			rng := a.Expr.Range()
			if len(elems) == len(terms) {
				rng = elems[i].Range()
			}
			sf, err := ParseSortField(t)
			if err != nil {
				return nil, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Unknown sort term",
					Detail:   fmt.Sprintf("%s. A sort term is a column or a transform, optionally followed by asc|desc and nulls first|last: \"event_ts desc nulls last\", \"bucket(16, user_id)\", \"day(ts)\".", err),
					Subject:  rng.Ptr(),
					Context:  a.Range.Ptr(),
				}
			}
			sf.Range = rng
			fields = append(fields, sf)
		}
		return fields, nil
	}
	return nil, valueError(a, "Unsupported attribute kind", "internal error: unknown kind")
}

// expandEquivalences accepts Iceberg's spelling of equal_schemes, where one
// key lists several schemes: {"s3a,s3n" = "s3"}.
func expandEquivalences(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		for _, part := range strings.Split(k, ",") {
			if p := strings.TrimSpace(part); p != "" {
				out[p] = v
			}
		}
	}
	return out
}

func wholeNumber(v cty.Value) (int64, bool) {
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return 0, false
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return 0, false
	}
	n, acc := bf.Int64()
	return n, acc == big.Exact
}

// decodeProperties records each key with the range of its own item when the
// map is written literally, so explain can point at the exact line.
func (l *loader) decodeProperties(a *hcl.Attribute, pb *PolicyBody, blockName string) {
	v, ok := l.evalAttr(a)
	if !ok {
		return
	}
	m, err := toStringMap(v)
	if err != nil {
		l.diags = append(l.diags, typeError(a, "a map of strings", v))
		return
	}
	ranges := map[string]hcl.Range{}
	if pairs, diags := hcl.ExprMap(a.Expr); !diags.HasErrors() {
		for _, p := range pairs {
			kv, kd := p.Key.Value(l.ctx)
			if kd.HasErrors() || kv.IsNull() || !kv.IsKnown() {
				continue
			}
			if ks, err := convert.Convert(kv, cty.String); err == nil {
				ranges[ks.AsString()] = hcl.RangeBetween(p.Key.Range(), p.Value.Range())
			}
		}
	}
	pb.Properties = map[string]Setting[string]{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rng, ok := ranges[k]
		if !ok {
			rng = a.Range
		}
		if owner, ok := ownedProperty(k); ok {
			l.warnf(LintOwnedProperty, rng.Ptr(), "Property set by a policy attribute",
				"%q is what %s sets; write %s instead, so icewright can check the value and explain it.", k, owner, owner)
		}
		l.cfg.Secrets.addProperty(k, m[k])
		pb.Properties[k] = Setting[string]{Value: m[k], Set: true, Origin: rng, Block: blockName,
			Sensitive: IsSecretKey(k) || l.cfg.Secrets.Contains(m[k])}
	}
}

// policyRef reads `policy = policy.NAME` or `extends = policy.NAME`.
func (l *loader) policyRef(a *hcl.Attribute) (string, bool) {
	tr, diags := hcl.AbsTraversalForExpr(a.Expr)
	if diags.HasErrors() || len(tr) != 2 || tr.RootName() != "policy" {
		l.errorf(a.Expr.Range().Ptr(), "Invalid policy reference", "%s must be a reference such as policy.base.", a.Name)
		return "", false
	}
	step, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		l.errorf(a.Expr.Range().Ptr(), "Invalid policy reference", "%s must be a reference such as policy.base.", a.Name)
		return "", false
	}
	return step.Name, true
}

func (l *loader) decodePolicy(b *hcl.Block) {
	name := b.Labels[0]
	if prev, ok := l.cfg.Policies[name]; ok {
		l.errorf(b.DefRange.Ptr(), "Duplicate policy", "A policy named %q was already declared at %s.", name, prev.DeclRange)
		return
	}
	blockName := fmt.Sprintf("policy %q", name)
	pb, content := l.decodeBody(b.Body, bodyPolicy, blockName)
	p := &Policy{Name: name, Body: pb, DeclRange: b.DefRange}
	if a, ok := content.Attributes["extends"]; ok {
		if ref, ok := l.policyRef(a); ok {
			p.Extends, p.ExtendsRng = ref, a.Expr.Range()
		}
	}
	l.cfg.Policies[name] = p
}

func (l *loader) decodeTable(b *hcl.Block) {
	t := l.readTable(b)
	l.addTable(&t)
}

// decodedTable is a table block decoded but not yet added to the
// configuration, with the diagnostics of its decoding: Load decodes the
// table blocks of a large file as it parses them (readChunk) and adds them
// in declaration order after the policies, as decodeTable does.
type decodedTable struct {
	table *TableBlock // nil when the address is invalid
	label hcl.Range
	diags hcl.Diagnostics
}

func (l *loader) readTable(b *hcl.Block) (d decodedTable) {
	outer := l.diags
	l.diags = nil
	defer func() { d.diags, l.diags = l.diags, outer }()
	addr := b.Labels[0]
	if _, _, _, err := SplitAddress(addr); err != nil {
		l.errorf(b.LabelRanges[0].Ptr(), "Invalid table address", "%s. A table block names one table; use a tables block for patterns.", err)
		return d
	}
	if l.scratch == nil {
		l.scratch = new(PolicyBody)
	}
	pb := l.scratch
	*pb = PolicyBody{}
	content := l.decodeBodyInto(pb, b.Body, bodyTable, fmt.Sprintf("table %q", addr))
	t := &TableBlock{Address: addr, body: compact(pb), DeclRange: b.DefRange}
	if a, ok := content.Attributes["policy"]; ok {
		if ref, ok := l.policyRef(a); ok {
			t.Policy, t.PolicyRng = ref, a.Expr.Range()
		}
	}
	return decodedTable{table: t, label: b.LabelRanges[0]}
}

// addTable adds a decoded table block, or says why not: a second block for
// the same table is an error whose body's diagnostics are not reported.
func (l *loader) addTable(d *decodedTable) {
	t := d.table
	if t == nil {
		l.diags = append(l.diags, d.diags...)
		return
	}
	if prev, dup := l.cfg.tableIndex[t.Address]; dup {
		l.errorf(t.DeclRange.Ptr(), "Duplicate table block", "The table %q already has a block at %s.", t.Address, prev.DeclRange)
		return
	}
	l.diags = append(l.diags, d.diags...)
	l.cfg.Tables = append(l.cfg.Tables, t)
	if l.cfg.tableIndex == nil {
		l.cfg.tableIndex = map[string]*TableBlock{}
	}
	l.cfg.tableIndex[t.Address] = t
	l.labelRanges[t] = d.label
}

func (l *loader) decodeTables(b *hcl.Block) {
	pattern := b.Labels[0]
	if msg := checkPattern(pattern); msg != "" {
		l.errorf(b.LabelRanges[0].Ptr(), "Invalid table pattern", "%s.", msg)
		return
	}
	pb, content := l.decodeBody(b.Body, bodyTables, fmt.Sprintf("tables %q", pattern))
	t := &TablesBlock{Pattern: pattern, Body: pb, DeclRange: b.DefRange}
	if a, ok := content.Attributes["policy"]; ok {
		if ref, ok := l.policyRef(a); ok {
			t.Policy, t.PolicyRng = ref, a.Expr.Range()
		}
	}
	if a, ok := content.Attributes["exclude"]; ok {
		if v, ok := l.evalAttr(a); ok {
			ex, err := toStringList(v)
			if err != nil {
				l.diags = append(l.diags, typeError(a, "a list of address patterns", v))
			}
			elems, _ := hcl.ExprList(a.Expr)
			for i, p := range ex {
				if msg := checkPattern(p); msg != "" {
					rng := a.Expr.Range()
					if len(elems) == len(ex) {
						rng = elems[i].Range()
					}
					l.errorf(rng.Ptr(), "Invalid exclude pattern", "%s.", msg)
					continue
				}
				t.Exclude = append(t.Exclude, p)
			}
		}
	}
	// A selector that can match no address is a mistake, usually a missing
	// namespace level ("lake.orders"); one whose excludes remove everything
	// it matches manages nothing.
	everything := selectorLanguage{Pattern: "**"}
	if _, ok, decided := selectorsOverlap(selectorLanguage{Pattern: pattern}, everything); decided && !ok {
		l.errorf(b.LabelRanges[0].Ptr(), "Table pattern matches no table",
			"%q can match no table address: an address has at least three levels, <catalog>.<namespace>.<table>.", pattern)
	} else if _, ok, decided := selectorsOverlap(selectorLanguage{pattern, t.Exclude}, everything); decided && !ok {
		l.warnf(LintSelectorEmpty, b.LabelRanges[0].Ptr(), "Selector excludes every table it matches",
			"tables %q excludes %s, which covers every table the pattern matches; the block manages nothing.", pattern, quoteList(t.Exclude))
	}
	l.cfg.Selectors = append(l.cfg.Selectors, t)
	l.labelRanges[t] = b.LabelRanges[0]
}
