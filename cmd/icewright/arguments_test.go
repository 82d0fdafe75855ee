package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseGlobal(t *testing.T) {
	cases := []struct {
		args []string
		want Global
		err  string
	}{
		{args: []string{"plan", "-json"}, want: Global{Command: "plan", Args: []string{"-json"}}},
		{args: []string{"-chdir=x", "validate"}, want: Global{Chdir: "x", Command: "validate", Args: []string{}}},
		{args: []string{"--chdir", "x", "validate"}, want: Global{Chdir: "x", Command: "validate", Args: []string{}}},
		{args: []string{"-version"}, want: Global{Version: true}},
		{args: []string{"-help", "plan"}, want: Global{Help: true, Command: "plan", Args: []string{}}},
		{args: []string{"-chdir="}, err: "-chdir needs a directory"},
		{args: []string{"-json", "plan"}, err: "unknown global flag -json"},
	}
	for _, c := range cases {
		got, err := ParseGlobal(c.args)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %+v, want %+v", c.args, got, c.want)
		}
	}
}

func TestParsePlan(t *testing.T) {
	got, err := ParsePlan([]string{
		"-out=p.plan", "--json", "-detailed-exitcode", "-target=lake.a.*", "-target", "lake.b.c",
		"-var=retention=5d", "-var-file=prod.hcl", "-var", "x=1", "-parallelism=8", "-no-color",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{
		Out: "p.plan", Format: "json", JSON: true, Input: true, DetailedExitCode: true, Targets: []string{"lake.a.*", "lake.b.c"},
		Vars:        Vars{Vars: []string{"retention=5d", "x=1"}, VarFiles: []string{"prod.hcl"}},
		Parallelism: 8, NoColor: true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"plan positional", second(ParsePlan([]string{"extra"})), "plan takes no arguments"},
		{"plan bad var", second(ParsePlan([]string{"-var=novalue"})), `expected name=value`},
		{"plan negative parallelism", second(ParsePlan([]string{"-parallelism=-1"})), "at least 1"},
		{"plan bad parallelism", second(ParsePlan([]string{"-parallelism=x"})), "invalid value"},
		{"apply target with planfile", second(ParseApply([]string{"-target=a.b.c", "p.plan"})), "cannot be combined"},
		{"apply two files", second(ParseApply([]string{"a", "b"})), "at most 1 argument"},
		{"show no file", second(ParseShow(nil)), "needs a saved plan file"},
		{"inspect no addr", second(ParseInspect(nil)), "needs a table address"},
		{"explain no addr", second(ParseExplain([]string{"-no-color"})), "needs a table address"},
		{"fmt two paths", second(ParseFmt([]string{"a", "b"})), "at most 1 argument"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
	for _, h := range []string{"-h", "-help", "--help"} {
		if _, err := ParseApply([]string{h}); !errors.Is(err, errHelp) {
			t.Errorf("%s: got %v, want errHelp", h, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestParseFmtCheckDoesNotWrite(t *testing.T) {
	a, err := ParseFmt([]string{"-check", "-recursive", "dir"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Write || !a.Check || !a.Recursive || a.Path != "dir" {
		t.Errorf("got %+v", a)
	}
}

func TestParseDemoDefault(t *testing.T) {
	a, err := ParseDemo(nil)
	if err != nil || a.Dir != "icewright-demo" {
		t.Errorf("got %+v, %v", a, err)
	}
}

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "", want: nil},
		{in: "  -json   -no-color ", want: []string{"-json", "-no-color"}},
		{in: `-var='a=b c' -var="x=\"y\""`, want: []string{"-var=a=b c", `-var=x="y"`}},
		{in: `-target=a\ b`, want: []string{"-target=a b"}},
		{in: `''`, want: []string{""}},
		{in: `-var='open`, err: true},
		{in: `trailing\`, err: true},
	}
	for _, c := range cases {
		got, err := splitArgs(c.in)
		if c.err {
			if err == nil {
				t.Errorf("%q: no error", c.in)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestWithEnvArgsOrder(t *testing.T) {
	c := &cli{env: map[string]string{"ICEWRIGHT_CLI_ARGS": "-no-color", "ICEWRIGHT_CLI_ARGS_plan": "-parallelism=2"}}
	got, err := c.withEnvArgs("plan", []string{"-parallelism=3"})
	if err != nil {
		t.Fatal(err)
	}
	// Explicit arguments come last so they override the environment.
	want := []string{"-no-color", "-parallelism=2", "-parallelism=3"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	a, err := ParsePlan(got)
	if err != nil || a.Parallelism != 3 || !a.NoColor {
		t.Errorf("parsed %+v, %v", a, err)
	}
}
