package main

import "errors"

// Commands whose packages have not landed yet. Each is replaced by its own
// file as providers arrive. They still parse their arguments, so -help
// works.

var errPending = errors.New("not implemented yet")

func (c *cli) pending(cmd string, err error) int {
	if err != nil {
		return c.usage(cmd, err)
	}
	return c.fail(errPending)
}

func (c *cli) inspect(args []string) int {
	_, err := ParseInspect(args)
	return c.pending("inspect", err)
}
