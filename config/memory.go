package config

import (
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// compactBody is a PolicyBody that keeps only what its block set. A
// PolicyBody has a Setting for every attribute (about 4.5 KB), so keeping
// one per table block made a configuration of 185,000 one-line table blocks
// hold 860 MB (issue 43.7); a one-attribute block holds about 150 bytes
// this way.
type compactBody struct {
	fields     []compactField // the Set attributes, in policyFields order
	blocks     []compactBlock // the declared nested blocks
	properties map[string]Setting[string]
}

type compactField struct {
	index   int        // into policyFields()
	setting settingPtr // a copy of the Setting
}

type compactBlock struct {
	name      string
	declRange hcl.Range
}

func compact(pb *PolicyBody) compactBody {
	var c compactBody
	for i, f := range policyFields() {
		s := f.get(pb).(settingPtr)
		if set, _, _ := s.meta(); set {
			c.fields = append(c.fields, compactField{i, s.copySetting()})
		}
	}
	for _, b := range nestedBlocks {
		if declared, rng := blockState(pb, b); *declared {
			c.blocks = append(c.blocks, compactBlock{b, *rng})
		}
	}
	c.properties = pb.Properties
	return c
}

// expand is the PolicyBody c was made from. Its Properties map is c's own:
// callers that change it copy it first (merged does).
func (c compactBody) expand() PolicyBody {
	var pb PolicyBody
	fields := policyFields()
	for _, f := range c.fields {
		fields[f.index].get(&pb).(settingPtr).fillFrom(f.setting)
	}
	for _, b := range c.blocks {
		declared, rng := blockState(&pb, b.name)
		*declared, *rng = true, b.declRange
	}
	pb.Properties = c.properties
	return pb
}

// fileForDiagnostics is what Config.Files keeps of a parsed file: its bytes,
// for the source lines a diagnostic shows, and a navigator that parses the
// file again the first time a diagnostic asks for its context ("in table
// ..."). Keeping every file's syntax tree for that would hold about 1.3 KB
// per one-line block for as long as the Config lives.
func fileForDiagnostics(filename string, src []byte) *hcl.File {
	return &hcl.File{Bytes: src, Nav: &lazyNav{filename: filename, src: src}}
}

type lazyNav struct {
	filename string
	src      []byte
	once     sync.Once
	nav      interface{ ContextString(offset int) string }
}

func (n *lazyNav) ContextString(offset int) string {
	n.once.Do(func() {
		f, _ := hclsyntax.ParseConfig(n.src, n.filename, hcl.InitialPos)
		if f != nil {
			n.nav, _ = f.Nav.(interface{ ContextString(offset int) string })
		}
	})
	if n.nav == nil {
		return ""
	}
	return n.nav.ContextString(offset)
}
