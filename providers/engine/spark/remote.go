package spark

import (
	"fmt"
	"strings"

	"github.com/icewright/icewright/config"
)

// CheckRemote says whether remote is a Spark Connect URL,
// sc://host:port/;param=value;...: the engine block's remote is checked
// with the configuration (providers.ConfigDiagnostics, at the attribute's
// file:line:col) and again when the engine is opened.
func CheckRemote(remote string) error {
	if !strings.HasPrefix(remote, "sc://") {
		return fmt.Errorf("remote must be a Spark Connect URL, sc://host:port (with ;token=... when the endpoint needs one), got %q", RedactRemote(remote))
	}
	return nil
}

// remoteToken finds the token parameter of a Spark Connect URL
// (sc://host:port/;token=SECRET;use_ssl=true).
func remoteToken(remote string) (string, bool) {
	for _, p := range strings.Split(remote, ";")[1:] {
		if k, v, ok := strings.Cut(p, "="); ok && strings.EqualFold(strings.TrimSpace(k), "token") && v != "" {
			return v, true
		}
	}
	return "", false
}

// RedactRemote masks a Spark Connect URL's token for display. The token is
// also among the configuration's secrets (config masks every URL parameter
// named like a secret, config.IsSecretKey), which every output stream
// masks; this is for the messages the engine composes itself.
func RedactRemote(remote string) string {
	if tok, ok := remoteToken(remote); ok {
		return strings.ReplaceAll(remote, tok, config.Masked)
	}
	return remote
}
