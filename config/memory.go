package config

import (
	"sort"
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
	c.expandInto(&pb)
	return pb
}

// expandInto sets *pb to the PolicyBody c was made from, as expand, in a
// body the caller reuses (a PolicyBody is 4.6 KB: Load checks every table
// block's).
func (c compactBody) expandInto(pb *PolicyBody) {
	*pb = PolicyBody{}
	fields := policyFields()
	for _, f := range c.fields {
		fields[f.index].get(pb).(settingPtr).fillFrom(f.setting)
	}
	for _, b := range c.blocks {
		declared, rng := blockState(pb, b.name)
		*declared, *rng = true, b.declRange
	}
	pb.Properties = c.properties
}

// fileForDiagnostics is what Config.Files keeps of a parsed file: its bytes,
// for the source lines a diagnostic shows, and a navigator that finds a
// diagnostic's context ("in table ...") the first time one asks. Keeping
// every file's syntax tree for that would hold about 1.3 KB per one-line
// block for as long as the Config lives.
func fileForDiagnostics(filename string, src []byte) *hcl.File {
	return &hcl.File{Bytes: src, Nav: &lazyNav{filename: filename, src: src}}
}

type contextNav interface{ ContextString(offset int) string }

// lazyNav is hcl's navigator of a file, built when first asked. A file up
// to chunkBytes is parsed whole, once, as hcl would. A larger one is not:
// its whole parse took 400 MB for the 10 MB configuration of issue 43.7,
// and plan prints one warning with context; the navigator keeps the starts
// of its top-level lines instead, and parses only the item an offset is
// in, which is the item hcl's navigator would name.
type lazyNav struct {
	filename string
	src      []byte
	once     sync.Once
	whole    contextNav
	starts   []hcl.Pos // a large file's top-level line starts
}

func (n *lazyNav) ContextString(offset int) string {
	n.once.Do(func() {
		if len(n.src) > chunkBytes {
			n.starts = itemStarts(n.src, 1)
			return
		}
		f, _ := hclsyntax.ParseConfig(n.src, n.filename, hcl.InitialPos)
		if f != nil {
			n.whole, _ = f.Nav.(contextNav)
		}
	})
	if n.starts == nil {
		if n.whole == nil {
			return ""
		}
		return n.whole.ContextString(offset)
	}
	// A top-level item begins a line outside brackets, so the item holding
	// offset begins at the last such line start at or before it.
	i := sort.Search(len(n.starts), func(i int) bool { return n.starts[i].Byte > offset }) - 1
	if i < 0 {
		return ""
	}
	start, end := n.starts[i], len(n.src)
	if i+1 < len(n.starts) {
		end = n.starts[i+1].Byte
	}
	f, _ := hclsyntax.ParseConfig(n.src[start.Byte:end], n.filename, start)
	if f == nil {
		return ""
	}
	nav, _ := f.Nav.(contextNav)
	if nav == nil {
		return ""
	}
	return nav.ContextString(offset)
}

// chunkBytes is how much of a configuration file hcl parses at once: a file
// larger than this is parsed a run of whole top-level items at a time.
// hcl's parser first lexes a whole input into tokens (about 96 bytes per
// token, 21 times the source for one-line table blocks), so a 10 MB file
// needed 210 MB of tokens next to its syntax tree. A variable so that
// FuzzLoadChunked parses small inputs in chunks.
var chunkBytes = 256 << 10

// parseInChunks parses src in runs of whole top-level items of about
// chunkBytes, each with its true position in the file, and has read take
// what Load needs of each run's body (readChunk), so only one run's syntax
// tree is alive at a time. ok is false when src is small enough to parse
// whole, or when a chunk has an error: then the caller drops the chunks and
// parses src whole, so diagnostics are hcl's own for the whole file. A cut
// the scanner puts inside a multi-line construct (a heredoc, a comment,
// brackets) leaves the chunk before it unterminated, which hcl reports as
// an error, so a wrong cut can only send the file to the whole parse.
func parseInChunks(src []byte, filename string, read func(*parsedChunk, hcl.Body)) (chunks []parsedChunk, diags hcl.Diagnostics, ok bool) {
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
		c := parsedChunk{src: src[s.Byte:end], start: s, filename: filename}
		read(&c, f.Body)
		chunks = append(chunks, c)
	}
	return chunks, diags, true
}

// parsedChunk is a parsed file (body is set until Load reads it), or a run
// of items of one, read as it was parsed (src is set then).
type parsedChunk struct {
	body     hcl.Body
	src      []byte
	start    hcl.Pos
	filename string
	// A chunk's top-level schema diagnostics and items, in order.
	diags hcl.Diagnostics
	items []chunkItem
}

// chunkItem is a top-level block of a chunk: a block other than table, or a
// table block decoded as the chunk was parsed, or (table nil) a table block
// whose chunk is parsed again when it is decoded.
type chunkItem struct {
	block    *hcl.Block
	table    *decodedTable
	defRange hcl.Range
}

// readChunk is what Load keeps of a chunk's body. Its table blocks are
// decoded now when none needs what is known only once every file is read
// (decodedLate): otherwise the chunk is parsed again when its table blocks
// are decoded, since keeping the syntax tree of every chunk until then held
// about 1.3 KB per one-line block.
func (l *loader) readChunk(c *parsedChunk, body hcl.Body) {
	content, diags := body.Content(topSchema)
	c.diags = diags
	if content == nil {
		return
	}
	early := true
	for _, b := range content.Blocks {
		if b.Type == "table" && decodedLate(b.Body) {
			early = false
			break
		}
	}
	for _, b := range content.Blocks {
		switch {
		case b.Type != "table":
			c.items = append(c.items, chunkItem{block: b, defRange: b.DefRange})
		case early:
			t := l.readTable(b)
			c.items = append(c.items, chunkItem{table: &t, defRange: b.DefRange})
		default:
			c.items = append(c.items, chunkItem{defRange: b.DefRange})
		}
	}
}

// decodedLate says whether a table block's body reads what is known only
// once every file is read: an expression (at any depth) that refers to var
// or local, or properties, whose values are marked sensitive when they hold
// a secret of a catalog or variable declared anywhere. Other expressions
// evaluate the same in the context readChunk has (the same names, var and
// local empty), mistakes included. A body not in hcl's native syntax is
// decoded late too.
func decodedLate(body hcl.Body) bool {
	b, ok := body.(*hclsyntax.Body)
	if !ok {
		return true
	}
	for name, a := range b.Attributes {
		if name == "properties" {
			return true
		}
		for _, tr := range a.Expr.Variables() {
			if r := tr.RootName(); r == "var" || r == "local" {
				return true
			}
		}
	}
	for _, nb := range b.Blocks {
		if decodedLate(nb.Body) {
			return true
		}
	}
	return false
}

// tableSource is where Load finds table blocks, in declaration order:
// blocks already parsed, table blocks decoded as their chunk was parsed, or
// a chunk parsed again when its blocks are decoded (readChunk).
type tableSource struct {
	blocks  []*hcl.Block
	decoded []*decodedTable
	chunk   *parsedChunk
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
// checkInput; heredocs end at a line holding only their marker.
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
