package views

import (
	"strings"

	"github.com/icewright/icewright/config"
)

// ConfigSummary says what a valid configuration declares, for validate:
// "1 catalog, 2 policies, 1 table block, 1 tables selector".
func ConfigSummary(cfg *config.Config) string {
	parts := []string{
		countOf(len(cfg.Catalogs), "catalog", "catalogs"),
		countOf(len(cfg.Policies), "policy", "policies"),
		countOf(len(cfg.Tables), "table block", "table blocks"),
		countOf(len(cfg.Selectors), "tables selector", "tables selectors"),
	}
	return strings.Join(parts, ", ")
}
