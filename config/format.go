package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns the canonical formatting of one file. A file with syntax
// errors is not formatted (hclwrite would reshape broken tokens); the
// errors are returned instead.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	if d := checkInput(src, filename); d != nil {
		return nil, hcl.Diagnostics{d}
	}
	_, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	return hclwrite.Format(src), diags
}
