package config

import (
	"fmt"
	"math/big"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EnvVarPrefix sets a variable from the environment: ICEWRIGHT_VAR_retention=7d.
const EnvVarPrefix = "ICEWRIGHT_VAR_"

type varDecl struct {
	v        *Variable
	ty       cty.Type
	typed    bool // a type was written; decides how -var text is parsed
	def      cty.Value
	hasDef   bool
	nameRng  hcl.Range
	declared hcl.Range
}

// decodeVariables reads the declarations and then the values, in
// Terraform's precedence (later wins): default, ICEWRIGHT_VAR_name, each
// -var-file in order, each -var in order.
func (l *loader) decodeVariables(blocks []*hcl.Block) {
	decls := map[string]*varDecl{}
	var order []string
	for _, b := range blocks {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			l.errorf(b.LabelRanges[0].Ptr(), "Invalid variable name", "%q is not a valid name: use letters, digits, underscores and dashes, starting with a letter.", name)
			continue
		}
		if prev, ok := decls[name]; ok {
			l.errorf(b.DefRange.Ptr(), "Duplicate variable", "A variable named %q was already declared at %s.", name, prev.declared)
			continue
		}
		d := l.declareVariable(b, name)
		decls[name] = d
		order = append(order, name)
		l.cfg.Variables[name] = d.v
	}

	values := l.variableValues(decls)

	for _, name := range order {
		d := decls[name]
		v, ok := values[name]
		if !ok {
			l.errorf(d.declared.Ptr(), "No value for required variable",
				"The variable %q has no default; set it with -var=\"%s=...\", a -var-file, or the environment variable %s%s.", name, name, EnvVarPrefix, name)
			l.varValues[name] = cty.DynamicVal
			continue
		}
		l.varValues[name] = v
		d.v.Value = goValue(v)
		if d.v.Sensitive {
			l.cfg.Secrets.addValue(v)
		}
	}
}

// declareVariable decodes one variable block: its type, description,
// sensitivity and default (converted to the type).
func (l *loader) declareVariable(b *hcl.Block, name string) *varDecl {
	content, diags := b.Body.Content(variableSchema)
	l.diags = append(l.diags, diags...)
	d := &varDecl{
		v:        &Variable{Name: name, Type: "any", DeclRange: b.DefRange},
		ty:       cty.DynamicPseudoType,
		declared: b.DefRange,
		nameRng:  b.LabelRanges[0],
	}
	if a, ok := content.Attributes["type"]; ok {
		ty, diags := typeexpr.TypeConstraint(a.Expr)
		l.diags = append(l.diags, diags...)
		if !diags.HasErrors() {
			d.ty, d.typed = ty, true
			d.v.Type = typeexpr.TypeString(ty)
		}
	}
	if a, ok := content.Attributes["description"]; ok {
		l.diags = append(l.diags, decodeLiteral(a, cty.String, &d.v.Description)...)
	}
	if a, ok := content.Attributes["sensitive"]; ok {
		l.diags = append(l.diags, decodeLiteral(a, cty.Bool, &d.v.Sensitive)...)
	}
	if a, ok := content.Attributes["default"]; ok {
		v, diags := a.Expr.Value(nil)
		l.diags = append(l.diags, diags...)
		if !diags.HasErrors() && !v.IsNull() {
			cv, err := convert.Convert(v, d.ty)
			if err != nil {
				l.errorf(a.Expr.Range().Ptr(), "Invalid default value for variable", "The default for %q does not match its type %s: %s.", name, d.v.Type, err)
			} else {
				d.def, d.hasDef = cv, true
			}
		}
	}
	return d
}

// variableValues are the declared variables' values: the defaults, then
// the environment, each -var-file and each -var, a later one winning.
func (l *loader) variableValues(decls map[string]*varDecl) map[string]cty.Value {
	values := map[string]cty.Value{}
	for name, d := range decls {
		if d.hasDef {
			values[name] = d.def
		}
	}
	envNames := make([]string, 0)
	for k := range l.env {
		if strings.HasPrefix(k, EnvVarPrefix) {
			envNames = append(envNames, k)
		}
	}
	sort.Strings(envNames)
	for _, k := range envNames {
		name := strings.TrimPrefix(k, EnvVarPrefix)
		d, ok := decls[name]
		if !ok {
			continue // like TF_VAR_: the environment may carry values for other configurations
		}
		if v, ok := l.parseVarText(d, l.env[k], "environment variable "+k); ok {
			values[name] = v
		}
	}
	for _, vf := range l.opts.VarFiles {
		l.readVarFile(vf, decls, values)
	}
	for _, kv := range l.opts.Vars {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			l.errorf(nil, "Invalid -var option", "The -var option %q is not of the form name=value.", kv)
			continue
		}
		d, declared := decls[name]
		if !declared {
			l.errorf(nil, "Value for undeclared variable", "A variable named %q was assigned with -var, but no variable %q is declared.%s", name, name, suggestVar(name, decls))
			continue
		}
		if v, ok := l.parseVarText(d, raw, "-var "+name); ok {
			values[name] = v
		}
	}
	return values
}

func suggestVar(name string, decls map[string]*varDecl) string {
	names := make([]string, 0, len(decls))
	for n := range decls {
		names = append(names, n)
	}
	sort.Strings(names)
	if s := nameSuggestion(name, names); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

// parseVarText turns command-line or environment text into a value. As in
// Terraform, text is taken literally for untyped and primitive variables,
// and parsed as an HCL expression for list, map and any-typed ones.
func (l *loader) parseVarText(d *varDecl, raw, source string) (cty.Value, bool) {
	if d.v.Sensitive {
		// Masked even when it does not parse: an error may quote it.
		l.cfg.Secrets.add(raw)
	}
	var v cty.Value
	if !d.typed || d.ty.IsPrimitiveType() {
		v = cty.StringVal(raw)
	} else {
		expr, diags := hclsyntax.ParseExpression([]byte(raw), source, hcl.InitialPos)
		if diags.HasErrors() {
			l.errorf(d.declared.Ptr(), "Invalid value for variable", "The value of %s is not a valid expression for type %s: %s.", source, d.v.Type, diags.Error())
			return cty.NilVal, false
		}
		var vdiags hcl.Diagnostics
		v, vdiags = expr.Value(nil)
		if vdiags.HasErrors() {
			l.errorf(d.declared.Ptr(), "Invalid value for variable", "The value of %s could not be evaluated: %s.", source, vdiags.Error())
			return cty.NilVal, false
		}
	}
	cv, err := convert.Convert(v, d.ty)
	if err != nil {
		l.errorf(d.declared.Ptr(), "Invalid value for variable", "The value of %s does not match the type %s of variable %q: %s.", source, d.v.Type, d.v.Name, err)
		return cty.NilVal, false
	}
	return cv, true
}

// readVarFile reads an HCL file of `name = value` lines. Relative paths are
// against the configuration directory, which is where -chdir puts the
// command. Values must be literals, as in Terraform's .tfvars.
func (l *loader) readVarFile(path string, decls map[string]*varDecl, values map[string]cty.Value) {
	full := varFilePath(l.dir, path)
	src, err := ReadRegularFile(full, MaxConfigFileBytes)
	if err != nil {
		l.errorf(nil, "Cannot read variables file", "%s.", err)
		return
	}
	l.sources["var-file:"+path] = src
	if d := checkInput(src, full); d != nil {
		l.diags = append(l.diags, d)
		return
	}
	f, diags := l.parser.ParseHCL(src, full)
	l.diags = append(l.diags, diags...)
	if f == nil || diags.HasErrors() {
		return
	}
	attrs, diags := f.Body.JustAttributes()
	l.diags = append(l.diags, diags...)
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a := attrs[name]
		d, ok := decls[name]
		if !ok {
			l.warnf(LintUndeclaredVar, a.NameRange.Ptr(), "Value for undeclared variable", "The variables file assigns %q, but no such variable is declared; the value is ignored.%s", name, suggestVar(name, decls))
			continue
		}
		v, vdiags := a.Expr.Value(nil)
		l.diags = append(l.diags, vdiags...)
		if vdiags.HasErrors() {
			continue
		}
		cv, err := convert.Convert(v, d.ty)
		if err != nil {
			l.errorf(a.Expr.Range().Ptr(), "Invalid value for variable", "The value for %q does not match its type %s: %s.", name, d.v.Type, err)
			continue
		}
		values[name] = cv
	}
}

func decodeLiteral[T any](a *hcl.Attribute, ty cty.Type, dst *T) hcl.Diagnostics {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return diags
	}
	cv, err := convert.Convert(v, ty)
	if err != nil || cv.IsNull() {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: %s required.", a.Name, ty.FriendlyName()),
			Subject:  a.Expr.Range().Ptr(),
		})
	}
	switch p := any(dst).(type) {
	case *string:
		*p = cv.AsString()
	case *bool:
		*p = cv.True()
	}
	return diags
}

// goValue converts a resolved variable to plain Go: string, int64 or
// float64, bool, []string or []any, map[string]string or map[string]any.
func goValue(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Bool:
		return v.True()
	case ty == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			if i, acc := bf.Int64(); acc == big.Exact {
				return i
			}
		}
		f, _ := bf.Float64()
		return f
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		var out []any
		allStrings := true
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			g := goValue(e)
			if _, ok := g.(string); !ok {
				allStrings = false
			}
			out = append(out, g)
		}
		if allStrings {
			ss := make([]string, len(out))
			for i, g := range out {
				ss[i] = g.(string)
			}
			return ss
		}
		return out
	case ty.IsMapType() || ty.IsObjectType():
		out := map[string]any{}
		allStrings := true
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			g := goValue(e)
			if _, ok := g.(string); !ok {
				allStrings = false
			}
			out[k.AsString()] = g
		}
		if allStrings {
			ss := make(map[string]string, len(out))
			for k, g := range out {
				ss[k] = g.(string)
			}
			return ss
		}
		return out
	}
	return nil
}

// varFilePath is where a -var-file path is read: relative ones against the
// configuration directory.
func varFilePath(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
