package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/testkit"
)

// Distinctive secrets, one per place a secret can enter (issue 13.8).
var testSecrets = map[string]string{
	"catalog s3 secret property":        "CatS3cretZ9q1",
	"catalog credential (secret half)":  "CredS3cretW7e2",
	"sensitive variable from the env":   "VarEnvS3cretX4r8",
	"sensitive variable default":        "VarDefT0kenQ5m3",
	"sensitive variable -var":           "VarCli<H1dd3n>&P6k7", // JSON escapes <, > and &
	"keyword DSN password":              "DsnKwS3cretJ2b9",
	"URL DSN password":                  "DsnUrlS3cretL8v4",
	"REST credential":                   "RestCredS3cretN3c6",
	"secret-named literal policy value": "LitPassw0rdR9t2",
}

// TestNoSecretInAnyOutput sets a distinctive secret in every place one can
// enter and runs every command, good and failing, over them: no stdout,
// stderr or written file may contain any of them. Apply must still set the
// real values, which it takes from the configuration (the saved plan holds
// digests).
func TestNoSecretInAnyOutput(t *testing.T) {
	dir := t.TempDir()
	lake := testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	tbl := lake.CreateTable(t, "analytics.events", testkit.TableOptions{})
	testkit.Append(t, tbl, 3, 10, 1)
	cfg := `
catalog "lake" {
  type      = "sql"
  uri       = "` + lake.URI() + `"
  warehouse = "` + lake.Warehouse + `"
  properties = {
    "s3.secret-access-key" = "` + testSecrets["catalog s3 secret property"] + `"
    "credential"           = "client:` + testSecrets["catalog credential (secret half)"] + `"
  }
}

variable "pw" {
  sensitive = true
}

variable "tok" {
  sensitive = true
  default   = "` + testSecrets["sensitive variable default"] + `"
}

variable "hidden" {
  type      = string
  sensitive = true
}

policy "base" {
  target_file_size = "128MiB"
  properties = {
    "app.db.password" = var.pw
    "app.token"       = var.tok
    "app.label"       = "label-${var.hidden}"
    "app.secret"      = "` + testSecrets["secret-named literal policy value"] + `"
  }
}

tables "lake.analytics.*" {
  policy = policy.base
}
`
	write := func(dir, src string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := filepath.Join(dir, "good")
	write(good, cfg)

	// ICEWRIGHT_LOG=debug: the log records (the command line, every event
	// with its error) go to stderr too, and are held to the same rule.
	env := []string{"ICEWRIGHT_VAR_pw=" + testSecrets["sensitive variable from the env"], "ICEWRIGHT_LOG=debug"}
	hidden := "-var=hidden=" + testSecrets["sensitive variable -var"]
	planFile := filepath.Join(dir, "saved.plan")
	type output struct{ cmd, text string }
	var outputs []output
	runCase := func(wantOK bool, args ...string) string {
		t.Helper()
		c := &cli{environ: env, env: envMap(env)}
		out, errOut, code := runIn(t, c, args...)
		if wantOK && code != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		if !wantOK && code == exitOK {
			t.Fatalf("%v: want a failure\n%s\n%s", args, out, errOut)
		}
		// The command line itself carries secrets (-var): only what
		// icewright wrote is checked.
		outputs = append(outputs, output{strings.Join(args[:min(2, len(args))], " "), out + "\n" + errOut})
		return out + errOut
	}
	chdir := "-chdir=" + good
	runCase(true, chdir, "validate", hidden)
	runCase(true, chdir, "plan", hidden)
	runCase(true, chdir, "plan", "-json", hidden)
	runCase(true, chdir, "plan", "-out="+planFile, hidden)
	runCase(true, chdir, "show", planFile)
	if got := runCase(true, chdir, "show", "-json", planFile); !strings.Contains(got, "sha256:") {
		t.Fatalf("the saved plan shows no digest of the secret values:\n%s", got)
	}
	runCase(true, chdir, "explain", hidden, "lake.analytics.events")
	runCase(true, chdir, "apply", hidden, planFile)
	runCase(true, chdir, "inspect", hidden, "lake.analytics.events")
	runCase(true, chdir, "inspect", "-json", hidden, "lake.analytics.events")
	// doctor exits 1 here: the test's fixed clock is days from the
	// store's, which its clock check reports.
	runCase(false, chdir, "doctor", hidden)
	runCase(false, chdir, "doctor", "-json", hidden)
	// The saved plan with another secret in the configuration is stale.
	runCase(false, chdir, "apply", "-var=hidden=other-value", planFile)
	// The table now holds the secrets as properties: import, beside a
	// configuration of the catalog and the variables only, writes none of
	// them, on stdout or into its file; list and inspect by selector show
	// none either.
	runCase(true, chdir, "list", hidden)
	runCase(true, chdir, "list", "-json", hidden)
	runCase(true, chdir, "inspect", hidden, "lake.analytics.*")
	runCase(true, chdir, "inspect", "-json", hidden, "lake.analytics.*")
	imp := filepath.Join(dir, "import")
	write(imp, cfg[:strings.Index(cfg, `policy "base"`)])
	runCase(true, "-chdir="+imp, "import", hidden)
	runCase(true, "-chdir="+imp, "import", "-out=imported.icewright.hcl", hidden)
	outputs = append(outputs, output{"import -out (the file)", readFile(t, filepath.Join(imp, "imported.icewright.hcl"))})
	// Failures that quote values: a sensitive variable of the wrong type,
	// a keyword DSN and a URL DSN the sql catalog cannot open, a REST
	// catalog that cannot be reached with its credential.
	bad := filepath.Join(dir, "badtype")
	write(bad, strings.Replace(cfg, `target_file_size = "128MiB"`, `target_file_size = var.pw`, 1))
	runCase(false, "-chdir="+bad, "validate", hidden)
	runCase(false, "-chdir="+bad, "plan", "-json", hidden)
	kw := filepath.Join(dir, "kwdsn")
	write(kw, strings.Replace(cfg, `uri       = "`+lake.URI()+`"`,
		`uri       = "host=127.0.0.1 port=1 user=u password=`+testSecrets["keyword DSN password"]+` dbname=x"`, 1))
	runCase(false, "-chdir="+kw, "plan", hidden)
	runCase(false, "-chdir="+kw, "inspect", hidden, "lake.analytics.events")
	runCase(false, "-chdir="+kw, "doctor", hidden)
	pg := filepath.Join(dir, "urldsn")
	write(pg, strings.Replace(cfg, `uri       = "`+lake.URI()+`"`,
		`uri       = "postgres://u:`+testSecrets["URL DSN password"]+`@127.0.0.1:1/x?connect_timeout=1"`, 1))
	runCase(false, "-chdir="+pg, "plan", "-json", hidden)
	rest := filepath.Join(dir, "rest")
	write(rest, strings.Replace(strings.Replace(cfg, `type      = "sql"`, `type      = "rest"`, 1),
		`uri       = "`+lake.URI()+`"`, `uri       = "http://127.0.0.1:1/catalog"`, 1))
	write(rest, strings.Replace(readFile(t, filepath.Join(rest, "main.icewright.hcl")),
		`"credential"           = "client:`+testSecrets["catalog credential (secret half)"]+`"`,
		`"credential"           = "client:`+testSecrets["REST credential"]+`"`, 1))
	runCase(false, "-chdir="+rest, "plan", hidden)
	runCase(false, "-chdir="+pg, "doctor", "-json", hidden)
	runCase(false, "-chdir="+rest, "doctor", hidden)

	saved := readFile(t, planFile)
	for what, secret := range testSecrets {
		for _, o := range outputs {
			if containsAnyForm(o.text, secret) {
				t.Errorf("the %s appears in the output of %s:\n%s", what, o.cmd, o.text)
			}
		}
		if containsAnyForm(saved, secret) {
			t.Errorf("the %s appears in the saved plan", what)
		}
	}

	// Apply set the real values, from the configuration.
	got := lake.Reload(t, "analytics.events").Properties()
	for k, want := range map[string]string{
		"app.db.password": testSecrets["sensitive variable from the env"],
		"app.token":       testSecrets["sensitive variable default"],
		"app.label":       "label-" + testSecrets["sensitive variable -var"],
		"app.secret":      testSecrets["secret-named literal policy value"],
	} {
		if got[k] != want {
			t.Errorf("after apply %s = %q, want the configured value", k, got[k])
		}
	}
}

// containsAnyForm reports whether text holds secret as it is or as it
// appears inside a JSON string (the -json outputs escape ", \, control
// characters and <, > and &).
func containsAnyForm(text, secret string) bool {
	esc, _ := json.Marshal(secret)
	return strings.Contains(text, secret) || strings.Contains(text, strings.Trim(string(esc), `"`))
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLogMaskedOnceConfigLoaded: a log record written once the
// configuration is loaded goes through the same secret masking as every
// other line on stderr. The logger is made before the configuration is
// read, so it must not hold on to the unmasked stream.
func TestLogMaskedOnceConfigLoaded(t *testing.T) {
	const secret = "LogS3cretK5z1"
	dir := writeConfig(t, `
variable "pw" {
  sensitive = true
  default   = "`+secret+`"
}
`)
	var errb bytes.Buffer
	c := &cli{stdout: io.Discard, stderr: &errb, dir: dir,
		env: map[string]string{"ICEWRIGHT_LOG": "debug"},
		now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }}
	if err := c.startLog(); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.loadConfig(Vars{}, false); !ok {
		t.Fatalf("configuration: %s", errb.String())
	}
	// An event's error that quotes the value (a DSN in a failed connect).
	c.logger().Debug("event", "error", "connect postgres://u:"+secret+"@db/x: refused")
	c.flush()
	if !strings.Contains(errb.String(), "connect postgres://u:") {
		t.Fatalf("the record was not logged:\n%s", errb.String())
	}
	if strings.Contains(errb.String(), secret) {
		t.Fatalf("the log carries the secret:\n%s", errb.String())
	}
}

// TestLoggedArgs: the logged command line keeps every -var's name and
// leaves out its value, in each spelling the flag package accepts.
func TestLoggedArgs(t *testing.T) {
	got := strings.Join(loggedArgs([]string{"-var=a=1x", "--var", "b=2y", "-var", "c", "-target=x.y", "--var=d=e=3z", "-variable=v", "plan.out"}), " ")
	want := "-var=a=(not logged) --var b=(not logged) -var c=(not logged) -target=x.y --var=d=(not logged) -variable=v plan.out"
	if got != want {
		t.Fatalf("loggedArgs:\n got %s\nwant %s", got, want)
	}
}
