package zz

import (
	"fmt"
	"os"
	"testing"
)

func TestPaths(t *testing.T) {
	recs, _, _ := readAvro(os.Getenv("M"))
	for _, r := range recs {
		df := r["data_file"].(map[string]any)
		fmt.Println(df["file_path"])
	}
}
