package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// digest identifies the exact configuration a plan was made from (the
// plan's config_digest, for people and audit logs). `apply PLANFILE` does
// not compare it: a saved plan goes stale only when a table's effective
// policy changes (Effective.PolicyDigest), not on a comment. It covers the
// file names and contents (sorted, so directory order does not matter) and
// the resolved variable values: the same files with a different -var give a
// different policy, so a different digest. Environment values read through
// env() are deliberately left out: they carry credentials that rotate
// without changing any policy, and a token rotation must not invalidate an
// approved plan.
func (l *loader) digest() string {
	h := sha256.New()
	names := make([]string, 0, len(l.sources))
	for n := range l.sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		writeField(h, []byte("file"), []byte(n), l.sources[n])
	}
	vars := make([]string, 0, len(l.varValues))
	for n := range l.varValues {
		vars = append(vars, n)
	}
	sort.Strings(vars)
	for _, n := range vars {
		v := l.varValues[n]
		var enc []byte
		if v.IsWhollyKnown() {
			var err error
			enc, err = ctyjson.Marshal(v, cty.DynamicPseudoType)
			if err != nil {
				enc, _ = json.Marshal(v.GoString())
			}
		}
		writeField(h, []byte("var"), []byte(n), enc)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// writeField length-prefixes each part so that no two different inputs
// hash the same concatenation.
func writeField(h interface{ Write([]byte) (int, error) }, parts ...[]byte) {
	for _, p := range parts {
		var n [8]byte
		l := uint64(len(p))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(p)
	}
}

// PolicyDigest identifies the effective policy of one table by its values
// (docs/design.md §5.3): "sha256:..." over every attribute of the field table
// (defaults included, so writing a default explicitly changes nothing),
// which nested blocks are declared (a declared block turns its action on),
// and the properties the policy sets. Origins, comments, formatting, block
// and policy names, and other tables' policies are left out, so a saved
// plan survives every edit that does not change what this table gets.
// Values are hashed, never stored: a property value that is a secret only
// ever appears here as part of the digest.
func (e *Effective) PolicyDigest() string {
	h := sha256.New()
	writeField(h, []byte("address"), []byte(e.Address))
	b := &e.PolicyBody
	for _, blk := range nestedBlocks {
		if blk == "pricing" {
			continue // turns nothing on: its prices are fields
		}
		declared, _ := blockState(b, blk)
		writeField(h, []byte("block"), []byte(blk), []byte(strconv.FormatBool(*declared)))
	}
	defaults := digestDefaults()
	for i, f := range policyFields() {
		v := digestValue(f.kind, f.get(b).(settingPtr).value())
		if digestOmitDefault[f.block] || digestOmitDefault[f.path()] {
			if string(v) == string(defaults[i]) {
				continue
			}
		}
		writeField(h, []byte("field"), []byte(f.path()), v)
	}
	keys := make([]string, 0, len(b.Properties))
	for k := range b.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		writeField(h, []byte("property"), []byte(k), []byte(b.Properties[k].Value))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// digestOmitDefault names the blocks and attributes added after plan
// format 2.0 (docs/plan-format.md, 2.1): at their default they are left out
// of the digest, so the policies that do not use them keep the digest they
// had, and a plan saved before them still applies.
var digestOmitDefault = map[string]bool{"pricing": true, "compaction.max_cost": true, "compaction.max_cpu_hours": true}

// digestDefaults are digestValue of every policy field's default, in
// policyFields order.
var digestDefaults = sync.OnceValue(func() [][]byte {
	var pb PolicyBody
	fillDefaults(&pb)
	out := make([][]byte, len(policyFields()))
	for i, f := range policyFields() {
		out[i] = digestValue(f.kind, f.get(&pb).(settingPtr).value())
	}
	return out
})

// digestValue encodes a policy value exactly (bytes, nanoseconds, the
// canonical sort terms) so that two values digest alike only when equal.
func digestValue(kind valueKind, v any) []byte {
	if kind == kindSort {
		// SortField carries its source range, which is not a value.
		fs := v.([]SortField)
		terms := make([]string, len(fs))
		for i, f := range fs {
			terms[i] = f.String()
		}
		v = terms
	}
	enc, err := json.Marshal(v)
	if err != nil {
		// Every kind is a plain Go value (numbers, strings, lists, string
		// maps); a failure here would be a new kind this switch misses.
		return []byte(fmt.Sprintf("%#v", v))
	}
	return enc
}
