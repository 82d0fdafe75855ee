package views

import "strings"

// isSecretKey reports whether a property's value must be masked.
//
// ADAPTER: until config.IsSecretKey is committed this mirrors DESIGN §3.2 (names
// containing secret, password, token or credential); replace the body with
// a call to config.IsSecretKey so there is one rule.
func isSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"secret", "password", "token", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
