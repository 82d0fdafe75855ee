package catalogs

import "testing"

func TestSQLitePath(t *testing.T) {
	for uri, want := range map[string]string{
		"sqlite:/abs/c.db":         "/abs/c.db",
		"sqlite:rel/c.db":          "/cfg/rel/c.db",
		"sqlite:///rel/c.db":       "/cfg/rel/c.db",
		"sqlite:////abs/c.db":      "/abs/c.db",
		"sqlite:/abs/c.db?mode=ro": "/abs/c.db",
		"sqlite::memory:":          ":memory:",
		"sqlite://host/c.db":       "",
		"postgres://u@h/db":        "",
		"sqlite:":                  "",
	} {
		got, _, ok := SQLitePath("/cfg", uri)
		if (want == "") == ok || got != want {
			t.Errorf("SQLitePath(%q) = %q, %v; want %q", uri, got, ok, want)
		}
	}
	if _, q, _ := SQLitePath("/cfg", "sqlite:/abs/c.db?mode=ro"); q != "mode=ro" {
		t.Errorf("query = %q", q)
	}
}
