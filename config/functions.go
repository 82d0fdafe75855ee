package config

import (
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/agext/levenshtein"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions is the library available in expressions: the go-cty stdlib
// functions under the names Terraform users know, plus env() and file().
// env reads the environment passed in LoadOptions, never the process's, so
// a Load is a pure function of its inputs.
func functions(dir string, env map[string]string, onUnset func(name string)) map[string]function.Function {
	fns := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"ceil":            stdlib.CeilFunc,
		"floor":           stdlib.FloorFunc,
		"log":             stdlib.LogFunc,
		"max":             stdlib.MaxFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"signum":          stdlib.SignumFunc,
		"chomp":           stdlib.ChompFunc,
		"format":          stdlib.FormatFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"join":            stdlib.JoinFunc,
		"lower":           stdlib.LowerFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"replace":         stdlib.ReplaceFunc,
		"split":           stdlib.SplitFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"title":           stdlib.TitleFunc,
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"upper":           stdlib.UpperFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"keys":            stdlib.KeysFunc,
		"length":          stdlib.LengthFunc,
		"lookup":          stdlib.LookupFunc,
		"merge":           stdlib.MergeFunc,
		"range":           stdlib.RangeFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"tostring":        stdlib.MakeToFunc(cty.String),
		"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"toset":           stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"env":             envFunc(env, onUnset),
		"file":            fileFunc(dir),
	}
	for name, fn := range fns {
		fns[name] = guard(name, fn)
	}
	return fns
}

// envFunc is env(NAME) or env(NAME, DEFAULT). An unset variable without a
// default is an error naming it, at load time: an empty password or
// credential would otherwise surface as the catalog's authentication error,
// which does not say which variable is missing. A default, even
// env("X", ""), allows it unset. With onUnset (validate) an unset
// variable is an unknown string instead, and onUnset is told its name.
func envFunc(env map[string]string, onUnset func(name string)) function.Function {
	return function.New(&function.Spec{
		Description: "The value of an environment variable.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		VarParam:    &function.Parameter{Name: "default", Type: cty.String},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.NilVal, fmt.Errorf("env takes a name and at most one default, got %d arguments", len(args))
			}
			name := args[0].AsString()
			if v, ok := env[name]; ok {
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			if onUnset != nil {
				onUnset(name)
				return cty.UnknownVal(cty.String), nil
			}
			return cty.NilVal, fmt.Errorf("the environment variable %s is not set (env(%q, \"\") allows it unset)", name, name)
		},
	})
}

// fileFunc reads a UTF-8 file; relative paths are against the configuration
// directory (path.root), not the process's working directory.
func fileFunc(dir string) function.Function {
	return function.New(&function.Spec{
		Description: "The contents of a file, relative to the configuration directory.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			b, err := readSmallFile(p)
			if err != nil {
				return cty.NilVal, err
			}
			if !utf8.Valid(b) {
				return cty.NilVal, fmt.Errorf("%s is not valid UTF-8 text", p)
			}
			return cty.StringVal(string(b)), nil
		},
	})
}

// maxFileFunc bounds file(): it is for small snippets such as a JSON map of
// properties, and a configuration must never make icewright read /dev/zero.
const maxFileFunc = 4 << 20

func readSmallFile(p string) ([]byte, error) {
	b, err := ReadRegularFile(p, maxFileFunc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return b, nil
}

// guard turns a panic inside a library function into an error: the
// arguments are user input, and user input must never crash icewright.
func guard(name string, fn function.Function) function.Function {
	spec := &function.Spec{
		Description: fn.Description(),
		Params:      fn.Params(),
		VarParam:    fn.VarParam(),
		Type: func(args []cty.Value) (ty cty.Type, err error) {
			defer func() {
				if r := recover(); r != nil {
					ty, err = cty.NilType, fmt.Errorf("%s: %v", name, r)
				}
			}()
			return fn.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (v cty.Value, err error) {
			defer func() {
				if r := recover(); r != nil {
					v, err = cty.NilVal, fmt.Errorf("%s: %v", name, r)
				}
			}()
			return fn.Call(args)
		},
	}
	return function.New(spec)
}

// nameSuggestion returns the candidate closest to given, as hcl does for
// unknown attributes (edit distance below 3), or "".
func nameSuggestion(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(given, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
