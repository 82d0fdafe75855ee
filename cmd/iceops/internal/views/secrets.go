package views

import "github.com/iceops/iceops/config"

// isSecretKey is the one masking rule of DESIGN §3.2, owned by config.
func isSecretKey(key string) bool { return config.IsSecretKey(key) }
