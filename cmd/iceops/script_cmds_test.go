package main

import "github.com/rogpeppe/go-internal/testscript"

// scriptCmds are the domain commands the scripts use for assertions and
// fixtures.
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){}
}
