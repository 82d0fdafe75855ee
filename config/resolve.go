package config

import (
	"fmt"
	"strconv"
	"time"
)

// Defaults for attributes no block in the chain sets. Iceberg's own
// defaults where it has one, so a policy that says nothing changes nothing.
const (
	DefaultTargetFileSize      = 512 << 20 // Iceberg's write.target-file-size-bytes
	DefaultMinFileSizePercent  = 75        // of the target, as Spark's rewrite_data_files
	DefaultMaxFileSizePercent  = 180       // of the target, as Spark's rewrite_data_files
	DefaultMinInputFiles       = 5
	DefaultDeleteFileThreshold = 5
	DefaultMaxConcurrentGroups = 0 // one group per CPU, as the memory budget allows
	DefaultStrategy            = "binpack"
	DefaultMaxSnapshotAge      = 5 * 24 * time.Hour // Iceberg's history.expire.max-snapshot-age-ms
	DefaultMinSnapshots        = 1
	DefaultOlderThan           = 3 * 24 * time.Hour // Iceberg's remove_orphan_files default
	// DefaultOrphanEvery is how often reconcile sweeps a table that did
	// not change (orphan_files.every).
	DefaultOrphanEvery = 24 * time.Hour
	// DefaultMaxOrphanRatio aborts orphan removal when more than a quarter of
	// the files under a table look unreferenced. A healthy table's orphans are
	// a few failed writes; a quarter means the listing or the reference set is
	// wrong (a moved location, an s3a/s3 mismatch), and deleting would destroy
	// live data. Raise it per policy after checking.
	DefaultMaxOrphanRatio   = 0.25
	DefaultMinFilesForRatio = 100 // below this the ratio is noise: 3 strays in 10 files is normal
	DefaultPrefixMismatch   = "error"
	DefaultManifestMaxCount = 100
	DefaultManifestTarget   = 8 << 20 // Iceberg's commit.manifest.target-size-bytes
	DefaultAgeingAfter      = 90 * 24 * time.Hour
)

// CatalogByName returns the declared catalog, or nil.
func (c *Config) CatalogByName(name string) *Catalog {
	for _, cat := range c.Catalogs {
		if cat.Name == name {
			return cat
		}
	}
	return nil
}

// Resolve returns the effective policy of a table, or (nil, false) when no
// block matches it: such tables are not managed. A table block beats any
// tables selector; the matched block's own attributes beat its policy's,
// which beat the policy it extends.
func (c *Config) Resolve(address string) (*Effective, bool) {
	cat, ns, table, err := SplitAddress(address)
	if err != nil {
		return nil, false
	}
	e := &Effective{Address: address, Catalog: cat, Namespace: ns, Table: table}
	var body PolicyBody
	var policy string
	found := false
	if t := c.tableBlock(address); t != nil {
		body, policy = t.Body(), t.Policy
		e.MatchedBy, e.MatchRange = fmt.Sprintf("table %q", t.Address), t.DeclRange
		found = true
	}
	if !found {
		for _, s := range c.Selectors {
			if selectorMatches(s, address) {
				body, policy = s.Body, s.Policy
				e.MatchedBy, e.MatchRange = fmt.Sprintf("tables %q", s.Pattern), s.DeclRange
				found = true
				break
			}
		}
	}
	if !found {
		return nil, false
	}
	e.PolicyName = policy
	e.PolicyBody = c.merged(body, policy)
	e.DerivedProperties = derivedProperties(&e.PolicyBody)
	return e, true
}

func selectorMatches(s *TablesBlock, address string) bool {
	if !MatchPattern(s.Pattern, address) {
		return false
	}
	for _, ex := range s.Exclude {
		if MatchPattern(ex, address) {
			return false
		}
	}
	return true
}

// merged layers body over its policy chain and fills defaults. The walk
// stops at a cycle or an unknown policy (both are Load errors).
func (c *Config) merged(body PolicyBody, policy string) PolicyBody {
	var out PolicyBody
	c.mergedInto(&out, &body, policy)
	return out
}

// mergedInto sets *out to merged(*body, policy), in a body the caller
// reuses.
func (c *Config) mergedInto(out, body *PolicyBody, policy string) {
	*out = clonePolicyBody(*body)
	seen := map[string]bool{}
	for n := policy; n != "" && !seen[n]; {
		seen[n] = true
		p, ok := c.Policies[n]
		if !ok {
			break
		}
		mergeInto(out, &p.Body)
		n = p.Extends
	}
	fillDefaults(out)
}

func clonePolicyBody(b PolicyBody) PolicyBody {
	out := b
	out.Properties = make(map[string]Setting[string], len(b.Properties))
	for k, v := range b.Properties {
		out.Properties[k] = v
	}
	return out
}

// mergeInto fills every attribute dst does not set from src (a parent), per
// attribute, so a child's nested block overrides single attributes of the
// parent's block; properties merge per key.
func mergeInto(dst, src *PolicyBody) {
	for _, f := range policyFields() {
		f.get(dst).(settingPtr).fillFrom(f.get(src))
	}
	for _, b := range nestedBlocks {
		dd, dr := blockState(dst, b)
		sd, sr := blockState(src, b)
		if !*dd && *sd {
			*dd, *dr = true, *sr
		}
	}
	for k, v := range src.Properties {
		if _, ok := dst.Properties[k]; !ok {
			dst.Properties[k] = v
		}
	}
}

func def[T any](s *Setting[T], v T) {
	if !s.Set {
		s.Value = v
	}
}

func fillDefaults(p *PolicyBody) {
	def(&p.TargetFileSize, DefaultTargetFileSize)
	target := p.TargetFileSize.Value
	c := &p.Compaction
	def(&c.Strategy, DefaultStrategy)
	def(&c.MinInputFiles, DefaultMinInputFiles)
	def(&c.MinFileSize, target*DefaultMinFileSizePercent/100)
	def(&c.MaxFileSize, target*DefaultMaxFileSizePercent/100)
	def(&c.DeleteFileThreshold, DefaultDeleteFileThreshold)
	def(&c.MaxConcurrentGroups, DefaultMaxConcurrentGroups)
	def(&c.Engine, LocalEngine)
	r := &p.SnapshotRetention
	def(&r.MaxAge, DefaultMaxSnapshotAge)
	def(&r.MinSnapshots, DefaultMinSnapshots)
	o := &p.OrphanFiles
	def(&o.OlderThan, DefaultOlderThan)
	def(&o.MaxOrphanRatio, DefaultMaxOrphanRatio)
	def(&o.MinFilesForRatio, DefaultMinFilesForRatio)
	def(&o.PrefixMismatch, DefaultPrefixMismatch)
	def(&o.Every, DefaultOrphanEvery)
	// Iceberg's own DeleteOrphanFiles treats s3a and s3n as s3; a listing
	// that says s3a:// for files the metadata calls s3:// must not make live
	// files look orphaned (apache/iceberg#4346).
	def(&o.EqualSchemes, map[string]string{"s3a": "s3", "s3n": "s3"})
	m := &p.Manifests
	def(&m.MaxCount, DefaultManifestMaxCount)
	def(&m.TargetSize, DefaultManifestTarget)
	ag := &p.PartitionAgeing
	def(&ag.After, DefaultAgeingAfter)
	def(&ag.From, "day")
	def(&ag.To, "month")
	def(&ag.Default, false)
	def(&p.Pricing.ScansPerMonth, DefaultScansPerMonth)
	if p.Properties == nil {
		p.Properties = map[string]Setting[string]{}
	}
}

// derivedProperties are the table properties this policy owns (docs/design.md
// §3.4). Only attributes some block set are recorded: a default is not a
// decision, and icewright must not rewrite a property nobody asked it to own.
func derivedProperties(p *PolicyBody) map[string]Setting[string] {
	out := map[string]Setting[string]{}
	for k, v := range p.Properties {
		out[k] = v
	}
	str := func(s Setting[string], v string) Setting[string] {
		s.Value = v
		return s
	}
	if s := p.TargetFileSize; s.Set {
		out[PropTargetFileSize] = Setting[string]{Value: strconv.FormatInt(s.Value, 10), Set: true, Origin: s.Origin, Block: s.Block}
	}
	r := p.SnapshotRetention
	if s := r.MaxAge; s.Set {
		out[PropMaxSnapshotAge] = str(Setting[string]{Set: true, Origin: s.Origin, Block: s.Block}, strconv.FormatInt(s.Value.Milliseconds(), 10))
	}
	if s := r.MinSnapshots; s.Set {
		out[PropMinSnapshots] = str(Setting[string]{Set: true, Origin: s.Origin, Block: s.Block}, strconv.Itoa(s.Value))
	}
	if s := r.MaxRefAge; s.Set {
		out[PropMaxRefAge] = str(Setting[string]{Set: true, Origin: s.Origin, Block: s.Block}, strconv.FormatInt(s.Value.Milliseconds(), 10))
	}
	return out
}

// tableBlock is the table block for address, or nil.
func (c *Config) tableBlock(address string) *TableBlock {
	if c.tableIndex != nil && len(c.tableIndex) == len(c.Tables) {
		return c.tableIndex[address]
	}
	for _, t := range c.Tables {
		if t.Address == address {
			return t
		}
	}
	return nil
}
