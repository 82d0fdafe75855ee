package reach

import (
	"fmt"
	"strconv"
	"time"
)

// The catalog properties that pace the reading of manifests (the
// referenced set of the orphan sweep, expiry's walks, the plan's): a pause
// of PauseProperty after every PauseEveryProperty entries read (default
// 1,500). Unset or zero, nothing pauses (docs/catalogs.md).
const (
	PauseProperty      = "icewright.manifest-read-pause"
	PauseEveryProperty = "icewright.manifest-read-pause-every"
)

// ParsePace reads the icewright.manifest-read-pause* properties of
// catalog name (also checked with the configuration, providers.ConfigDiagnostics).
func ParsePace(name string, p map[string]string) (Pace, error) {
	var pace Pace
	if v, ok := p[PauseProperty]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return pace, fmt.Errorf("catalog %s: property %s = %q: want a duration such as \"100ms\"", name, PauseProperty, v)
		}
		pace.Pause = d
	}
	if v, ok := p[PauseEveryProperty]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return pace, fmt.Errorf("catalog %s: property %s = %q: want a whole number above 0", name, PauseEveryProperty, v)
		}
		pace.Every = n
	}
	return pace, nil
}
