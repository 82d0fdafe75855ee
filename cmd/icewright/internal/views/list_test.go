package views

import (
	"bytes"
	"testing"
)

// Columns align; an unmanaged table says so; no tables is one line.
func TestList(t *testing.T) {
	var buf bytes.Buffer
	l := &TableList{Tables: []ListedTable{
		{Address: "lake.a.long_name", Managed: true, Policy: "p", MatchedBy: `tables "lake.a.*"`, Origin: "m.icewright.hcl:3:1"},
		{Address: "lake.a.b", Managed: true, Policy: "base", MatchedBy: `table "lake.a.b"`, Origin: "m.icewright.hcl:9:1"},
		{Address: "lake.c.d"},
	}}
	if err := List(&buf, l, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	want := `lake.a.long_name  policy "p"     by tables "lake.a.*" at m.icewright.hcl:3:1
lake.a.b          policy "base"  by table "lake.a.b" at m.icewright.hcl:9:1
lake.c.d          unmanaged

3 tables, 2 managed.
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := List(&buf, &TableList{}, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "0 tables, 0 managed.\n" {
		t.Errorf("empty: %q", buf.String())
	}
}
