package main

// command is one icewright command: its name, the line the main help lists,
// its own help, and its runner. The table is the only list of commands:
// dispatch, the main help, `icewright help NAME`, -help and "did you mean" all
// read it, so a command cannot be missing from any of them.
type command struct {
	name     string
	synopsis string
	main     bool // listed under "Main commands"
	help     string
	run      func(*cli, []string) int
	// parse is the command's argument parser, for telling which flags it
	// takes (withEnvArgs).
	parse func([]string) error
}

// parseWith adapts a Parse function to command.parse.
func parseWith[T any](parse func([]string) (T, error)) func([]string) error {
	return func(args []string) error {
		_, err := parse(args)
		return err
	}
}

// commands is the table, in the order the main help lists the commands. It
// is a function, not a variable, because runners print help, which reads the
// table (a variable would be an initialisation cycle).
func commands() []command {
	return []command{
		{name: "plan", main: true, synopsis: "Observe the tables and show what must change", help: commandHelp["plan"], run: (*cli).plan, parse: parseWith(ParsePlan)},
		{name: "apply", main: true, synopsis: "Make the changes (asks for approval unless -auto-approve)", help: commandHelp["apply"], run: (*cli).apply, parse: parseWith(ParseApply)},
		{name: "validate", main: true, synopsis: "Check the configuration without contacting any catalog", help: commandHelp["validate"], run: (*cli).validate, parse: parseWith(ParseValidate)},
		{name: "demo", synopsis: "Build a local demo lakehouse and a configuration for it", help: commandHelp["demo"], run: (*cli).demo, parse: parseWith(ParseDemo)},
		{name: "doctor", synopsis: "Check catalogs, credentials, storage and what icewright can do on each table", help: commandHelp["doctor"], run: (*cli).doctor, parse: parseWith(ParseDoctor)},
		{name: "explain", synopsis: "Show every effective policy value for one table and where it was set", help: commandHelp["explain"], run: (*cli).explain, parse: parseWith(ParseExplain)},
		{name: "force-unlock", synopsis: "Remove a dead run's lease on one table", help: commandHelp["force-unlock"], run: (*cli).forceUnlock, parse: parseWith(ParseForceUnlock)},
		{name: "fmt", synopsis: "Rewrite configuration files in the canonical format", help: commandHelp["fmt"], run: (*cli).fmt, parse: parseWith(ParseFmt)},
		{name: "import", synopsis: "Write policies that keep existing tables as they are", help: commandHelp["import"], run: (*cli).importTables, parse: parseWith(ParseImport)},
		{name: "inspect", synopsis: "Health report of one table, with recommendations", help: commandHelp["inspect"], run: (*cli).inspect, parse: parseWith(ParseInspect)},
		{name: "list", synopsis: "List every table of the configured catalogs and the block that manages it", help: commandHelp["list"], run: (*cli).list, parse: parseWith(ParseList)},
		{name: "reconcile", synopsis: "Keep every table in policy: plan and apply each when due, with metrics", help: commandHelp["reconcile"], run: (*cli).reconcile, parse: parseWith(ParseReconcile)},
		{name: "restore", synopsis: "Put back the files of one quarantine run", help: commandHelp["restore"], run: (*cli).restore, parse: parseWith(ParseRestore)},
		{name: "show", synopsis: "Print a saved plan", help: commandHelp["show"], run: (*cli).show, parse: parseWith(ParseShow)},
		{name: "version", synopsis: "Print the icewright version", help: commandHelp["version"], run: (*cli).version, parse: parseWith(ParseVersion)},
	}
}

func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}
