package diff

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/icewright/icewright/config"
)

// LockProperty is the table property that holds an apply's lease
// (providers.Lease). Apply owns it; the diff never plans it, so a lease
// never makes a table look out of policy and a policy can neither set nor
// remove it.
const LockProperty = "icewright.lock"

// ignoredProperty reports keys that iceberg-go (or the catalog) maintains on
// its own, and apply's lease. Comparing them would make a plan that never
// converges.
func ignoredProperty(k string) bool {
	return k == "schema.name-mapping.default" || k == LockProperty
}

// planProperties compares the properties the policy owns with the table's.
// Only keys named by the configuration are touched (docs/design.md §3.4).
func planProperties(pol *config.Effective, st *TableState) (Action, bool) {
	ch := PropertiesChange{Set: map[string]string{}, Before: map[string]string{}}
	var reasons []string
	for _, k := range slices.Sorted(maps.Keys(pol.DerivedProperties)) {
		if ignoredProperty(k) {
			continue
		}
		want := pol.DerivedProperties[k]
		have, ok := st.Properties[k]
		if ok && have == want.Value {
			continue
		}
		if want.Sensitive || config.IsSecretKey(k) {
			// The plan (and its JSON, and the saved file) holds digests:
			// apply takes the value from the configuration.
			ch.Sensitive = append(ch.Sensitive, k)
			ch.Set[k] = config.SecretDigest(want.Value)
			if ok {
				ch.Before[k] = config.SecretDigest(have)
			}
			reasons = append(reasons, reason("properties["+quote(k)+"]", config.Masked, want.Origin, hcl.Range{}))
			continue
		}
		ch.Set[k] = want.Value
		if ok {
			ch.Before[k] = have
		}
		reasons = append(reasons, propertyReason(pol, k, want))
	}
	var removed []string
	for _, k := range pol.RemoveProperties.Value {
		if ignoredProperty(k) {
			continue
		}
		if _, owned := pol.DerivedProperties[k]; owned {
			continue // the set wins; config reports the contradiction
		}
		if have, ok := st.Properties[k]; ok && !slices.Contains(removed, k) {
			removed = append(removed, k)
			ch.Before[k] = have
			if config.IsSecretKey(k) {
				ch.Before[k] = config.SecretDigest(have)
				ch.Sensitive = append(ch.Sensitive, k)
			}
		}
	}
	if len(removed) > 0 {
		slices.Sort(removed)
		ch.Remove = removed
		list := make([]string, len(removed))
		for i, k := range removed {
			list[i] = quote(k)
		}
		reasons = append(reasons, reason("remove_properties", "["+strings.Join(list, ", ")+"]", pol.RemoveProperties.Origin, hcl.Range{}))
	}
	if len(ch.Set) == 0 && len(ch.Remove) == 0 {
		return Action{}, false
	}
	slices.Sort(ch.Sensitive)
	ch.Sensitive = slices.Compact(ch.Sensitive)
	return Action{
		Type:       UpdateProperties,
		Reason:     strings.Join(reasons, "; "),
		Properties: &ch,
	}, true
}

// propertyReason names the policy attribute behind a derived property.
func propertyReason(pol *config.Effective, key string, s config.Setting[string]) string {
	r := pol.SnapshotRetention
	switch key {
	case "write.target-file-size-bytes":
		if pol.TargetFileSize.Set {
			return reason("target_file_size", quote(config.FormatSizeExact(pol.TargetFileSize.Value)), s.Origin, hcl.Range{})
		}
	case propMaxSnapshotAgeMs:
		if r.MaxAge.Set || r.Declared {
			return reason("snapshot_retention.max_age", quote(config.FormatDuration(r.MaxAge.Value)), s.Origin, r.DeclRange)
		}
	case propMinSnapshotsToKeep:
		if r.MinSnapshots.Set || r.Declared {
			return reason("snapshot_retention.min_snapshots", strconv.Itoa(r.MinSnapshots.Value), s.Origin, r.DeclRange)
		}
	case propMaxRefAgeMs:
		if r.MaxRefAge.Set {
			return reason("snapshot_retention.max_ref_age", quote(config.FormatDuration(r.MaxRefAge.Value)), s.Origin, r.DeclRange)
		}
	}
	return reason("properties["+quote(key)+"]", quote(s.Value), s.Origin, hcl.Range{})
}

// propsAfter is the table's properties once update_properties has run: later
// actions (expiry's gc.enabled and retention keys) see the state the plan
// produces, not the one it starts from.
func propsAfter(pol *config.Effective, st *TableState) map[string]string {
	out := maps.Clone(st.Properties)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range pol.RemoveProperties.Value {
		if _, owned := pol.DerivedProperties[k]; !owned {
			delete(out, k)
		}
	}
	for k, s := range pol.DerivedProperties {
		out[k] = s.Value
	}
	return out
}
