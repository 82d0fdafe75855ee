package zz

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/avro/ocf"
)

func readAvro(p string) ([]map[string]any, map[string][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rd, err := ocf.NewReader(f)
	if err != nil {
		return nil, nil, err
	}
	var out []map[string]any
	for {
		var m map[string]any
		if err := rd.Decode(&m); err != nil {
			if err == io.EOF {
				break
			}
			return nil, nil, err
		}
		out = append(out, m)
	}
	return out, rd.Metadata(), nil
}

func TestSurvey(t *testing.T) {
	root := os.Getenv("SURVEY_ROOT")
	var mds []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".metadata.json") {
			mds = append(mds, p)
		}
		return nil
	})
	sort.Strings(mds)
	for _, md := range mds {
		raw, _ := os.ReadFile(md)
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			fmt.Println(md, "unparsable")
			continue
		}
		loc, _ := m["location"].(string)
		resolve := func(p string) string {
			p = strings.TrimPrefix(p, "file://")
			if filepath.IsAbs(p) {
				return p
			}
			return filepath.Join(os.Getenv("SURVEY_BASE"), p)
		}
		cur := fmt.Sprint(m["current-snapshot-id"])
		snaps, _ := m["snapshots"].([]any)
		props, _ := m["properties"].(map[string]any)
		var wp []string
		for k, v := range props {
			if strings.Contains(k, "path") || strings.Contains(k, "name-mapping") {
				wp = append(wp, fmt.Sprintf("%s=%.60v", k, v))
			}
		}
		missing := 0
		counts := map[string]int{}
		inline := 0
		for _, s := range snaps {
			sm := s.(map[string]any)
			var manifests []string
			if ml, ok := sm["manifest-list"].(string); ok {
				recs, _, err := readAvro(resolve(ml))
				if err != nil {
					missing++
					continue
				}
				for _, r := range recs {
					manifests = append(manifests, r["manifest_path"].(string))
				}
			} else if ms, ok := sm["manifests"].([]any); ok {
				inline++
				for _, x := range ms {
					manifests = append(manifests, x.(string))
				}
			}
			isCur := fmt.Sprint(sm["snapshot-id"]) == cur
			for _, mp := range manifests {
				recs, _, err := readAvro(resolve(mp))
				if err != nil {
					missing++
					continue
				}
				for _, r := range recs {
					df := r["data_file"].(map[string]any)
					fp := df["file_path"].(string)
					if _, err := os.Stat(resolve(fp)); err != nil {
						missing++
					}
					if isCur && fmt.Sprint(r["status"]) != "2" {
						c := fmt.Sprint(df["content"])
						if df["referenced_data_file"] != nil {
							c += "+ref"
						}
						c += "/" + fmt.Sprint(df["file_format"])
						counts[c]++
					}
				}
			}
		}
		fmt.Printf("%s\n   v%v loc=%s snaps=%d inline=%d missing=%d cur=%v %v\n", strings.TrimPrefix(md, root), m["format-version"], loc, len(snaps), inline, missing, counts, wp)
	}
}
