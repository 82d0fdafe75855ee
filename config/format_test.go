package config

import (
	"testing"
)

func TestFormat(t *testing.T) {
	src := "policy \"p\" {\ntarget_file_size=\"1GiB\"\n      compaction {\n strategy = \"sort\"\n  min_input_files=5\n}\n}\n"
	want := "policy \"p\" {\n  target_file_size = \"1GiB\"\n  compaction {\n    strategy        = \"sort\"\n    min_input_files = 5\n  }\n}\n"
	got, diags := Format([]byte(src), "main.icewright.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if string(got) != want {
		t.Fatalf("Format:\n%s\nwant:\n%s", got, want)
	}
	again, _ := Format(got, "main.icewright.hcl")
	if string(again) != string(got) {
		t.Errorf("Format is not idempotent:\n%s", again)
	}
}

func TestFormatRefusesSyntaxErrors(t *testing.T) {
	out, diags := Format([]byte("policy \"p\" {\n  target_file_size = \n"), "bad.icewright.hcl")
	if !diags.HasErrors() || out != nil {
		t.Fatalf("Format of a broken file = %q, %v", out, diags)
	}
	if s := diags[0].Subject; s == nil || s.Filename != "bad.icewright.hcl" {
		t.Errorf("subject = %v", s)
	}
}
