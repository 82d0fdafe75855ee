package manifestread

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
)

// FuzzRead: whatever the bytes, Read returns entries or an error, never a
// panic or an allocation the file's size does not justify (the header's
// and blocks' bounds); and what it reads without error, iceberg-go reads
// the same. Seeds: testdata/seed (a v1 and a v2 data manifest, a v2
// position-delete manifest; deflate and null codecs).
//
//	go test ./providers/internal/manifestread -run '^$' -fuzz '^FuzzRead$' -fuzztime 60s -fuzzminimizetime 2s
func FuzzRead(f *testing.F) {
	seeds, err := filepath.Glob("testdata/seed/*.avro")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata/seed: %v", err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		version := uint8(2)
		if strings.Contains(p, "v1-") {
			version = 1
		}
		f.Add(b, version, strings.Contains(p, "deletes"), int64(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, version uint8, deletes bool, seq int64) {
		v := int(version%3) + 1
		b := iceberg.NewManifestFile(v, "fuzz.avro", int64(len(data)), 0, 42)
		if v > 1 {
			b.SequenceNum(seq, seq)
			if deletes {
				b.Content(iceberg.ManifestContentDeletes)
			}
		}
		m := b.Build()
		// A hang is a failure too: the worker's crash keeps the input.
		stall := time.AfterFunc(20*time.Second, func() { panic("an input decoding for over 20 s") })
		defer stall.Stop()
		got, err := ourEntries(m, data, false)
		if err != nil {
			return
		}
		want, werr := func() (es []iceberg.ManifestEntry, err error) {
			defer func() {
				if recover() != nil {
					es, err = nil, errPanicked
				}
			}()
			return icebergEntries(m, data)
		}()
		if werr != nil {
			// Bytes only one reader accepts: Read's answer goes back
			// to iceberg-go's reader in the walk whenever it errs,
			// not the other way round; log what iceberg-go refused.
			t.Logf("Read accepts what iceberg-go refuses: %v", werr)
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%d entries, iceberg-go %d", len(got), len(want))
		}
		for i := range want {
			if d := Differences(want[i], got[i]); len(d) > 0 {
				t.Fatalf("entry %d: %s", i, strings.Join(d, "; "))
			}
		}
	})
}

var errPanicked = errorString("iceberg-go panicked")

type errorString string

func (e errorString) Error() string { return string(e) }

// FuzzReadList: ReadList on any bytes returns manifest files or an error,
// never a panic; what it reads without error, iceberg-go reads the same.
// Seeds: testdata/seed-list (a v1 list of Spark's, a v2 list of DuckDB's).
//
//	go test ./providers/internal/manifestread -run '^$' -fuzz FuzzReadList -fuzztime 60s -fuzzminimizetime 2s
func FuzzReadList(f *testing.F) {
	seeds, err := filepath.Glob("testdata/seed-list/*.avro")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata/seed-list: %v", err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ReadList(bytes.NewReader(data))
		if err != nil {
			return
		}
		want, werr := func() (ms []iceberg.ManifestFile, err error) {
			defer func() {
				if recover() != nil {
					ms, err = nil, errPanicked
				}
			}()
			return iceberg.ReadManifestList(bytes.NewReader(data))
		}()
		if werr != nil {
			t.Logf("ReadList accepts what iceberg-go refuses: %v", werr)
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%d manifests, iceberg-go %d", len(got), len(want))
		}
		for i := range want {
			if d := ListDifferences(want[i], got[i]); len(d) > 0 {
				t.Fatalf("manifest %d: %s", i, strings.Join(d, "; "))
			}
		}
	})
}
