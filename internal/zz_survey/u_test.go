package zz

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestUnion(t *testing.T) {
	ms, _ := filepath.Glob(os.Getenv("M"))
	for _, m := range ms {
		recs, _, err := readAvro(m)
		if err != nil {
			continue
		}
		for _, r := range recs {
			if df, ok := r["data_file"].(map[string]any); ok {
				fmt.Printf("%T %#v | %T %#v | %T\n", df["referenced_data_file"], df["referenced_data_file"], df["lower_bounds"], df["file_size_in_bytes"], df["content"])
			}
		}
	}
}
