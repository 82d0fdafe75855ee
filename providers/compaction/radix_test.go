package compaction

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedPerm must give exactly the stable comparison sort's permutation,
// for keys its word holds whole and for keys it must break ties on.
func TestSortedPermMatchesComparisonSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func() []byte{
		// Two int32 sort fields: markers constant, few bytes vary.
		"fixed, few varying bytes": func() []byte {
			return []byte{1, 0x80, 0, byte(rng.IntN(3)), byte(rng.IntN(256)), 1, 0x80, 0, 0, byte(rng.IntN(4))}
		},
		// Varying low bits under constant high ones (a sign-flipped
		// int32's top byte): only the low bits go into the packed word.
		"fixed, constant high bits": func() []byte {
			return []byte{1, 0xF0 | byte(rng.IntN(4)), byte(rng.IntN(256)), 0x80 | byte(rng.IntN(2)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(16))}
		},
		// More than 8 varying bytes: ties on the word are broken by the key.
		"fixed, 12 varying bytes": func() []byte {
			k := make([]byte, 12)
			for i := range k {
				k[i] = byte(rng.IntN(2))
			}
			return k
		},
		// Fixed-width keys with a null's shorter key now and then: the
		// offsets appear only at the first null, after fixed keys.
		"fixed, then nulls": func() []byte {
			if rng.IntN(50) == 0 {
				return []byte{nullLastByte}
			}
			return []byte{valueByte, 0x80, 0, byte(rng.IntN(3)), byte(rng.IntN(256))}
		},
		// Escaped strings of several lengths, with zero bytes and shared
		// prefixes longer than the word.
		"variable": func() []byte {
			s := make([]byte, rng.IntN(12))
			for i := range s {
				s[i] = "ab\x00"[rng.IntN(3)]
			}
			return appendEscaped([]byte{valueByte}, s)
		},
	}
	for name, gen := range shapes {
		t.Run(name, func(t *testing.T) {
			n := 5000
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = gen()
			}
			build := func() *keySet {
				ks := &keySet{}
				ks.reset(n)
				for _, k := range keys {
					ks.buf = append(ks.buf, k...)
					ks.end()
				}
				return ks
			}
			ks := build()
			for i, k := range keys {
				if !bytes.Equal(ks.key(i), k) {
					t.Fatalf("key %d is %x, appended %x", i, ks.key(i), k)
				}
			}
			want := make([]int32, n)
			for i := range want {
				want[i] = int32(i)
			}
			slices.SortStableFunc(want, func(a, b int32) int { return bytes.Compare(keys[a], keys[b]) })
			got := ks.sortedPerm(false)
			// Dropping the keys (when the words order the rows exactly)
			// must not change the order.
			if dropped := build().sortedPerm(true); !slices.Equal(dropped, got) {
				t.Fatal("sortedPerm(true) differs from sortedPerm(false)")
			}
			if !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("position %d: row %d (%x), want row %d (%x)", i, got[i], ks.key(int(got[i])), want[i], ks.key(int(want[i])))
					}
				}
			}
		})
	}
}

func TestRadixSortStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := make([]uint64, 10000)
	for i := range words {
		words[i] = rng.Uint64() & 0xFF0000FF000000F0 // constant bytes are skipped
	}
	idx := make([]int32, len(words))
	for i := range idx {
		idx[i] = int32(i)
	}
	orig := slices.Clone(words)
	radixSort(words, idx)
	for i := range words {
		if words[i] != orig[idx[i]] {
			t.Fatalf("position %d: word %x does not belong to row %d", i, words[i], idx[i])
		}
		if i > 0 && (words[i] < words[i-1] || words[i] == words[i-1] && idx[i] < idx[i-1]) {
			t.Fatalf("position %d: %x/%d after %x/%d", i, words[i], idx[i], words[i-1], idx[i-1])
		}
	}
}
