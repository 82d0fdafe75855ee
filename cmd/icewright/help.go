package main

import (
	"fmt"
	"strings"
)

// mainHelp is the help without a command. Its command lists come from the
// command table (commands.go), so a command cannot be missing from them. It
// is a function because the table's runners print it (a variable would be
// an initialisation cycle).
func mainHelp() string {
	return `Usage: icewright [global options] <command> [options] [args]

icewright keeps Apache Iceberg tables in the state their policy says: file
sizes, snapshot retention, sort order, orphan files. The configuration is
every *.icewright.hcl file in the working directory.

Main commands:
` + commandList(true) + `
Other commands:
` + commandList(false) + `
Global options (before the command):
  -chdir=DIR  Switch to DIR before running the command
  -help       Show this help; "icewright <command> -help" or "icewright help
              <command>" shows a command's help
  -version    Same as the version command

Environment:
  ICEWRIGHT_VAR_name          Set the variable "name"
  ICEWRIGHT_CLI_ARGS          Extra flags for every command (as Terraform's TF_CLI_ARGS)
  ICEWRIGHT_CLI_ARGS_<cmd>    Extra flags for one command, e.g. ICEWRIGHT_CLI_ARGS_plan
  ICEWRIGHT_LOG               Log level on stderr: error, warn (default), info, debug
  ICEWRIGHT_LOG_FORMAT        Log format: text (default) or json
  NO_COLOR                 Disable colour (also off when stdout is not a terminal)

Exit codes: 0 success; 1 error; plan -detailed-exitcode: 0 no changes,
1 error, 2 changes present; fmt -check: 3 when a file would change.
`
}

var commandHelp = map[string]string{
	"validate": `Usage: icewright [global options] validate [options]

  Check the configuration: syntax, types, sizes and durations, policy
  references, inheritance cycles, overlapping table selectors. Contacts no
  catalog. Warnings are shown but do not fail.

Options:
  -json              Print the diagnostics as one JSON document on stdout
                     (as terraform validate -json: valid, error_count,
                     warning_count, diagnostics with ranges)
  -compact-warnings  Print each warning in one line (code, summary, place)
  -var=NAME=VALUE    Set a variable (repeatable)
  -var-file=FILE     Read variables from an HCL file of name = value lines
  -no-color          Disable colour

Examples:
  icewright validate
  icewright -chdir=examples/quickstart validate
  icewright validate -var=retention=7d
`,
	"fmt": `Usage: icewright [global options] fmt [options] [PATH]

  Rewrite *.icewright.hcl files (and PATH if it is a file) in the canonical
  format. PATH defaults to the working directory; "-" formats standard
  input to standard output. The names of changed files are printed on
  stdout.

Options:
  -check      Change nothing; exit 3 if any file is not formatted
  -diff       Print the changes as a unified diff
  -recursive  Also process subdirectories
  -list=false Do not list the files that change
  -write=false Do not write changes to the files
  -no-color   Disable colour

Examples:
  icewright fmt
  icewright fmt -check -diff -recursive
  icewright fmt policies/main.icewright.hcl
`,
	"plan": `Usage: icewright [global options] plan [options]

  Observe every managed table through its catalog and show what must happen
  to bring it in policy. Nothing is changed.

Options:
  -out=FILE            Save the plan to FILE for "icewright apply FILE"
  -format=FORMAT       text (default), json, or markdown (a pull-request comment)
  -json                Same as -format=json
  -input=false         Never ask for input (plan asks for none; for pipelines)
  -detailed-exitcode   Exit 0 with no changes, 1 on error, 2 with changes
  -target=ADDR         Plan only matching tables (repeatable; * and ** globs)
  -var=NAME=VALUE      Set a variable (repeatable)
  -var-file=FILE       Read variables from an HCL file
  -parallelism=N       Observe N tables at a time (default 4)
  -compact-warnings    Print each warning in one line; a table warning once
                       per code with the tables it applies to
  -no-color            Disable colour

Examples:
  icewright plan
  icewright plan -out=tonight.plan
  icewright plan -json > plan.json
  icewright plan -target='lake.analytics.*' -detailed-exitcode
`,
	"apply": `Usage: icewright [global options] apply [options] [PLANFILE]

  Without PLANFILE: plan, show the plan, ask for approval, apply it.
  With PLANFILE: apply that saved plan; never deletes anything the plan did
  not show, and refuses if the effective policy of a table it changes is
  different now (comments, formatting and other tables do not count).

Options:
  -auto-approve        Do not ask for approval
  -json                Print JSON lines: one object per event, then the
                       results document as the last line
  -input=false         Never ask; without -auto-approve or PLANFILE, refuse
  -lock=false          Take no table leases and ignore other runs' leases
  -lock-timeout=D      Wait up to D for a table another run holds (default 0s)
  -lock-skip-ok        A table still held after -lock-timeout is a warning, not an error
  -target=ADDR         Apply only matching tables (repeatable; not with PLANFILE)
  -var=NAME=VALUE      Set a variable (repeatable)
  -var-file=FILE       Read variables from an HCL file
  -parallelism=N       Work on N tables at a time (default 4)
  -compact-warnings    Print each warning in one line
  -no-color            Disable colour

Examples:
  icewright apply
  icewright apply -auto-approve -target=lake.analytics.clicks
  icewright plan -out=tonight.plan && icewright apply tonight.plan
`,
	"show": `Usage: icewright [global options] show [options] PLANFILE

  Print a plan saved with "icewright plan -out=PLANFILE".

Options:
  -format=FORMAT  text (default), json, or markdown (a pull-request comment)
  -json           Same as -format=json (the same document as plan -json)
  -no-color       Disable colour

Examples:
  icewright show tonight.plan
  icewright show -json tonight.plan | jq .summary
  icewright show -format=markdown tonight.plan > comment.md
`,
	"inspect": `Usage: icewright [global options] inspect [options] ADDR|SELECTOR...

  Health report of tables of the configured catalogs, managed or not: each
  address given and every table each selector matches ('lake.sales.*';
  the globs of tables blocks). Shows the schema (field ids, names, types,
  required, nested fields), partition specs, sort orders, data files and a
  histogram of their sizes (one bucket per power of two, the target's
  bucket marked), partitions, delete files, manifests, snapshots, refs, an
  orphan estimate, the quarantine runs, and recommendations.

Options:
  -json            Print the report as JSON: one document for one address,
                   an array of them for a selector or several addresses
  -partitions      Add each partition's file-size histogram
  -var=NAME=VALUE  Set a variable (repeatable)
  -var-file=FILE   Read variables from an HCL file
  -no-color        Disable colour

Examples:
  icewright inspect lake.analytics.events
  icewright inspect 'lake.analytics.*'
  icewright inspect -json lake.analytics.events | jq .size_histogram
`,
	"import": `Usage: icewright [global options] import [options]

  Read the tables of the configured catalogs that no block manages yet and
  write the configuration that keeps them exactly as they are: one policy
  per set of settings (target file size, sort order, other properties), a
  tables selector where a whole namespace agrees and a table block for each
  outlier. No maintenance block is written, so the next plan shows no
  change; add compaction, snapshot_retention, orphan_files or manifests to
  a policy to have icewright maintain its tables. The table's retention
  properties are written as a commented snapshot_retention block. Secret
  property values are never written.

Options:
  -catalog=NAME    Import only this catalog's tables
  -target=GLOB     Import only matching tables (repeatable)
  -out=FILE        Write the configuration to FILE (refused if it exists)
                   instead of stdout
  -var=NAME=VALUE  Set a variable (repeatable)
  -var-file=FILE   Read variables from an HCL file
  -no-color        Disable colour

Examples:
  icewright import -out=imported.icewright.hcl
  icewright import -catalog=lake -target='lake.sales.*'
`,
	"list": `Usage: icewright [global options] list [options]

  List every table of every configured catalog with the policy that manages
  it and the block that chose it (file:line), or "unmanaged". The rule is
  the one plan uses: a table block beats any tables selector.

Options:
  -json            Print the list as one JSON document
  -managed         List only the tables a block manages
  -var=NAME=VALUE  Set a variable (repeatable)
  -var-file=FILE   Read variables from an HCL file
  -no-color        Disable colour

Examples:
  icewright list
  icewright list -managed -json | jq -r '.tables[].address'
`,
	"explain": `Usage: icewright [global options] explain [options] ADDR

  Show every effective policy value for one table, and the block and
  file:line that set it (or that it is a default). Contacts no catalog.

Options:
  -var=NAME=VALUE  Set a variable (repeatable)
  -var-file=FILE   Read variables from an HCL file
  -no-color        Disable colour

Examples:
  icewright explain lake.analytics.clicks
`,
	"demo": `Usage: icewright [global options] demo [DIR]

  Build a local demo lakehouse in DIR (default ./icewright-demo): a sqlite
  catalog, a file warehouse, tables with real maintenance debt made by real
  commits, and a configuration for them. Then prints what to run next.

Options:
  -no-color  Disable colour

Examples:
  icewright demo
  icewright demo /tmp/lakehouse && icewright -chdir=/tmp/lakehouse plan
`,
	"doctor": `Usage: icewright [global options] doctor [options] [SELECTOR...]

  Check what icewright needs, one line a finding with what to do: per catalog,
  that it answers (within its request deadline), where the storage
  credentials come from (never their values), that the warehouse allows
  write, list, read and delete of a probe object under _icewright_lock/
  (removed afterwards), and the clock skew against the store, which the
  orphan age guard depends on; per table (all of the catalog's, or those
  the SELECTOR globs match), what icewright cannot do there and why; per
  engine block, that its Spark Connect endpoint answers, Spark's version,
  and that its catalog and rewrite_data_files procedure exist (nothing is
  rewritten). Any failure exits 1; warnings exit 0.

Options:
  -catalog=NAME    Check only this catalog
  -json            Print the report as JSON
  -var=NAME=VALUE  Set a variable (repeatable)
  -var-file=FILE   Read variables from an HCL file
  -no-color        Disable colour

Examples:
  icewright doctor
  icewright doctor -catalog=lake 'lake.analytics.*'
`,
	"restore": `Usage: icewright [global options] restore [options] RUN_ID ADDR

  Put back the orphan files that one apply moved to the table's quarantine
  (orphan_files { quarantine = "7d" }). RUN_ID is the quarantine run the
  apply results name ("quarantine run 20261130T120000Z"); the runs are the
  directories under <table location>/.icewright-quarantine/.

  A file is never overwritten: when a file exists at the original path, that
  file is left as it is, its quarantined copy stays, and restore exits 1.

Options:
  -json            Print the result as JSON
  -var=NAME=VALUE  Set a variable (repeatable)
  -var-file=FILE   Read variables from an HCL file
  -no-color        Disable colour

Examples:
  icewright restore 20261130T120000Z lake.analytics.events
  icewright restore -json 20261130T120000Z lake.analytics.events
`,
	"force-unlock": `Usage: icewright [global options] force-unlock [options] RUN_ID ADDR

  Remove the lease that run RUN_ID holds on one table. Apply takes a lease on
  each table it changes (an object under <table location>/_icewright_lock/,
  renewed every 30s, lapsing 2 minutes after its run stops), so a crashed
  run's tables are free again within minutes by themselves. Use this only
  when a run is known to be dead and cannot be waited for. "locked by ..."
  messages name the run id. Asks for confirmation unless -force.

Options:
  -force           Do not ask for confirmation
  -var=NAME=VALUE  Set a variable (repeatable)
  -var-file=FILE   Read variables from an HCL file
  -no-color        Disable colour

Examples:
  icewright force-unlock 6f1c0d7e-1b9a-4b4e-9a57-0c8f2f6d2b11 lake.analytics.events
`,
	"reconcile": `Usage: icewright [global options] reconcile [options]

  Keep every managed table in policy, forever: maintenance that never stops.
  Each table is planned again when it is due (every -interval, with jitter so
  a fleet does not start at once), and what its plan shows is applied, under
  the table's lease: several reconcilers on one lakehouse share the tables,
  and a killed one's tables are taken over when its leases lapse (-lease-ttl).
  A table another run holds is skipped and tried again later. The catalogs
  are listed again every -interval (new tables are found then).

  SIGHUP, or a change in the configuration's files (checked every -watch),
  reads the configuration again (a configuration with errors is refused; the
  one in force stays). SIGTERM or Ctrl-C starts no new
  reconcile and lets the running ones finish their commits, then exits 0; a
  second one stops them at once.

  Endpoints on -listen: /metrics (Prometheus), /healthz, /readyz (after the
  first listing), /status (every table's last result and next due time, JSON)
  and POST /trigger?table=ADDR (a writer's hint: the table is reconciled
  within 5s; the table is the truth, the hint only brings it forward).

Options:
  -interval=DURATION  Time between two reconciles of a table (default 1h)
  -listen=ADDR        Serve the endpoints on ADDR (default 127.0.0.1:9464;
                      "" serves none)
  -once               Reconcile every table once, then exit (1 when a table
                      failed or could not be planned)
  -shadow             Plan and report; never apply
  -parallelism=N      Tables reconciled at once
  -table-metrics      Add per-table series (one label per table)
  -lease-ttl=DURATION How long a table's lease outlives a killed reconciler
                      (default 2m; renewed every quarter of it)
  -budget=SIZE        Compaction input of the whole fleet per interval
                      ("500GiB"); a table past it compacts in a later one
  -max-deletes=N      Hold an expiry or orphan sweep that would delete more
                      than N files for review (icewright apply runs it)
  -min-interval=KIND=DURATION
                      Run an action kind on a table at most this often
                      (repeatable; remove_orphan_files=24h)
  -watch=DURATION     How often the configuration's files are checked for a
                      change that reloads them (default 10s; 0: SIGHUP only)
  -var=NAME=VALUE     Set a variable (repeatable)
  -var-file=FILE      Read variables from an HCL file
  -no-color           Disable colour

Examples:
  icewright reconcile -interval=30m
  icewright reconcile -shadow -once
`,
	"version": `Usage: icewright version [-json]

  Print the icewright version, the commit it was built from and the commit's
  date (from the Go build info).

Options:
  -json  Print them as one JSON document

Examples:
  icewright version
  icewright version -json
`,
}

// helpFor returns the help text of a command, or the main help.
func helpFor(name string) string {
	if c, ok := lookupCommand(name); ok {
		return c.help
	}
	return mainHelp()
}

// commandList is the main help's list of the main (or the other) commands.
func commandList(main bool) string {
	var b strings.Builder
	for _, c := range commands() {
		if c.main == main {
			fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.synopsis)
		}
	}
	return b.String()
}

// commandNames lists the commands for "did you mean" on a typo.
func commandNames() []string {
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// suggest returns the closest name within a small edit distance, or "".
func suggest(given string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(given), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
