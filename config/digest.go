package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// digest identifies the configuration a plan was made from, so `apply
// PLANFILE` can refuse a plan whose configuration changed. It covers the
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
