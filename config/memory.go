package config

import (
	"strings"
	"sync"
	"unicode"

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

// chunkBytes is how much of a configuration file hcl parses at once: a file
// larger than this is parsed a run of whole top-level items at a time.
// hcl's parser first lexes a whole input into tokens (about 96 bytes per
// token, 21 times the source for one-line table blocks), so a 10 MB file
// needed 210 MB of tokens next to its syntax tree.
const chunkBytes = 256 << 10

// parseInChunks parses src in runs of whole top-level items of about
// chunkBytes, each with its true position in the file, and returns their
// bodies. ok is false when src is small enough to parse whole, or when a
// chunk has an error: then the caller parses src whole, so diagnostics are
// hcl's own for the whole file. A cut the scanner puts inside a multi-line
// construct (a heredoc, a comment, brackets) leaves the chunk before it
// unterminated, which hcl reports as an error, so a wrong cut can only
// send the file to the whole parse.
func parseInChunks(src []byte, filename string) (chunks []parsedChunk, diags hcl.Diagnostics, ok bool) {
	starts := itemStarts(src, chunkBytes)
	if len(starts) < 2 {
		return nil, nil, false
	}
	for i, s := range starts {
		end := len(src)
		if i+1 < len(starts) {
			end = starts[i+1].Byte
		}
		f, d := hclsyntax.ParseConfig(src[s.Byte:end], filename, s)
		if d.HasErrors() || f == nil {
			return nil, nil, false
		}
		diags = append(diags, d...)
		chunks = append(chunks, parsedChunk{body: f.Body, src: src[s.Byte:end], start: s, filename: filename})
	}
	return chunks, diags, true
}

// parsedChunk is a parsed file, or a run of items of one (src is set then).
type parsedChunk struct {
	body     hcl.Body
	src      []byte
	start    hcl.Pos
	filename string
}

// tableSource is where Load finds table blocks, in declaration order:
// blocks already parsed, or a chunk of a file parsed in chunks, parsed again
// when its blocks are decoded. Keeping the syntax tree of every chunk until
// the table blocks are decoded (after variables, locals and policies) held
// about 1.3 KB per one-line block; parsing a chunk again costs its parse
// time and about 25 times its size, for a moment.
type tableSource struct {
	blocks []*hcl.Block
	chunk  *parsedChunk
}

func (ts tableSource) tableBlocks() []*hcl.Block {
	if ts.chunk == nil {
		return ts.blocks
	}
	c := ts.chunk
	// The chunk parsed without errors before, and its diagnostics (of the
	// parse and of the top-level schema) were reported then.
	f, _ := hclsyntax.ParseConfig(c.src, c.filename, c.start)
	if f == nil {
		return nil
	}
	content, _ := f.Body.Content(topSchema)
	var out []*hcl.Block
	for _, b := range content.Blocks {
		if b.Type == "table" {
			out = append(out, b)
		}
	}
	return out
}

// itemStarts is where chunks of src begin: 0, then the starts of lines at
// least chunk bytes apart that begin outside any bracket, string, heredoc
// or comment (so between top-level items). One linear pass, like
// checkNesting; heredocs end at a line holding only their marker.
func itemStarts(src []byte, chunk int) []hcl.Pos {
	starts := []hcl.Pos{hcl.InitialPos}
	var frames []bool // per open level: true when it is an interpolation inside a string
	inString := false
	heredoc := ""
	line := 1
	for i := 0; i < len(src); i++ {
		c := src[i]
		if heredoc != "" {
			// In a heredoc: whole lines until the marker's.
			if c != '\n' {
				continue
			}
			line++
			j := i + 1
			for j < len(src) && src[j] != '\n' {
				j++
			}
			if strings.TrimRight(strings.TrimLeft(string(src[i+1:j]), " \t"), "\r") == heredoc {
				heredoc = ""
				i = j - 1 // the marker's newline is code again
			}
			continue
		}
		switch {
		case c == '\n':
			line++
			if !inString && len(frames) == 0 && i+1 < len(src) && i+1-starts[len(starts)-1].Byte >= chunk {
				starts = append(starts, hcl.Pos{Line: line, Column: 1, Byte: i + 1})
			}
		case inString && c == '\\' && i+1 < len(src) && src[i+1] != '\n':
			i++
		case inString && c == '"':
			inString = false
		case inString && (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
			i++
			frames = append(frames, true)
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			for i += 2; i < len(src) && !(src[i-1] == '*' && src[i] == '/'); i++ {
				if src[i] == '\n' {
					line++
				}
			}
		case c == '<' && i+1 < len(src) && src[i+1] == '<':
			j := i + 2
			if j < len(src) && src[j] == '-' {
				j++
			}
			k := j
			for k < len(src) && (src[k] == '_' || src[k] == '-' || unicode.IsLetter(rune(src[k])) || unicode.IsDigit(rune(src[k]))) {
				k++
			}
			if k > j && k < len(src) && (src[k] == '\n' || src[k] == '\r') {
				heredoc = string(src[j:k])
				i = k - 1 // the opener's newline starts the heredoc's lines
				if src[k] == '\r' {
					i = k
				}
			}
		case c == '(' || c == '[' || c == '{':
			frames = append(frames, false)
		case c == ')' || c == ']' || c == '}':
			if n := len(frames); n > 0 {
				inString = frames[n-1]
				frames = frames[:n-1]
			}
		}
	}
	return starts
}
