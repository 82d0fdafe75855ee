package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

// session opens the catalogs' session for a command that reads tables,
// with a context an interrupt cancels; done closes both.
func (c *cli) session(cfg *config.Config) (ctx context.Context, sess *providers.Session, done func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	sess = providers.Open(cfg, providers.Options{Env: c.environ, Now: c.now})
	return ctx, sess, func() {
		sess.Close()
		stop()
	}
}
