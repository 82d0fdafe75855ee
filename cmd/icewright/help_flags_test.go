package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestHelpListsEveryFlag reads the flag registrations in this package's
// source (fs.BoolVar(&x, "name", ...) and the add*Flags helpers they call)
// and wants each command's help to name every flag its parser accepts, so
// a new flag cannot stay undocumented.
func TestHelpListsEveryFlag(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	flags := map[string][]string{} // function → flag names it registers
	calls := map[string][]string{} // function → functions it calls
	command := map[string]string{} // function → newFlagSet's command name
	for _, f := range files {
		if matched, _ := filepath.Match("*_test.go", f); matched {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || fn.Recv != nil {
				continue
			}
			name := fn.Name.Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fun := call.Fun.(type) {
				case *ast.Ident:
					calls[name] = append(calls[name], fun.Name)
					if fun.Name == "newFlagSet" && len(call.Args) == 1 {
						if lit, ok := call.Args[0].(*ast.BasicLit); ok {
							command[name], _ = strconv.Unquote(lit.Value)
						}
					}
				case *ast.SelectorExpr:
					if recv, ok := fun.X.(*ast.Ident); ok && recv.Name == "fs" && len(call.Args) >= 2 {
						if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							flags[name] = append(flags[name], s)
						}
					}
				}
				return true
			})
		}
	}
	var registered func(fn string, seen map[string]bool) []string
	registered = func(fn string, seen map[string]bool) []string {
		if seen[fn] {
			return nil
		}
		seen[fn] = true
		out := append([]string{}, flags[fn]...)
		for _, c := range calls[fn] {
			out = append(out, registered(c, seen)...)
		}
		return out
	}
	if len(command) < 8 {
		t.Fatalf("found %d commands' flag sets (%v); the source walk is broken", len(command), command)
	}
	for fn, cmd := range command {
		help, ok := commandHelp[cmd]
		if !ok {
			continue // the global options, documented in the main help
		}
		for _, flag := range registered(fn, map[string]bool{}) {
			if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(flag) + `\b`).MatchString(help) {
				t.Errorf("icewright %s -help does not list -%s", cmd, flag)
			}
		}
	}
}
