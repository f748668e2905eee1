package gguf

import (
	"os"
	"testing"

	"ember/inference/quant"
)

// TestParseMemory bounds what Parse allocates. A count that the file backs only in
// part costs nothing (the first pass fails before anything is allocated); a valid file
// costs at most the size of its KV and TensorInfo structs, a few times its metadata.
func TestParseMemory(t *testing.T) {
	vocabBytes, err := os.ReadFile(vocab)
	must(t, err)
	storiesBytes, err := os.ReadFile(stories)
	must(t, err)

	// Counts inflated to the most the remaining bytes could hold.
	inflated := func(b []byte, field int, div uint64) []byte {
		return withPatch(b, field, (uint64(len(b))-24)/div)
	}
	for name, b := range map[string][]byte{
		"vocab KV count":       inflated(vocabBytes, 16, minKVBytes),
		"stories KV count":     inflated(storiesBytes, 16, minKVBytes+1),
		"stories tensor count": inflated(storiesBytes, 8, minTensorInfoBytes),
	} {
		t.Run(name, func(t *testing.T) {
			mustRefuse(t, b) // checks the allocation bound
		})
	}

	// Valid files made of the smallest possible KVs and tensor infos.
	tinyKVs := newBuilder()
	tinyKVs.b = append(tinyKVs.b, "GGUF"...)
	tinyKVs.u32(3)
	tinyKVs.u64(0)
	tinyKVs.u64(20000)
	for i := range 20000 {
		tinyKVs.str(itoa(i))
		tinyKVs.u32(uint32(TypeUint8))
		tinyKVs.u8(1)
	}
	w := NewWriter()
	w.SetAlignment(1)
	for i := range 10000 {
		must(t, w.AddTensor(itoa(i), quant.I8, []uint64{1}, []byte{1}))
	}
	for name, b := range map[string][]byte{"tiny KVs": tinyKVs.b, "tiny tensors": writeFile(t, w)} {
		t.Run(name, func(t *testing.T) {
			var err error
			alloc := allocDuring(func() { _, err = Parse(b) })
			must(t, err)
			if alloc > 4*uint64(len(b))+allocSlack {
				t.Errorf("Parse allocated %d bytes for a %d-byte file", alloc, len(b))
			}
			t.Logf("%d bytes allocated for a %d-byte file", alloc, len(b))
		})
	}
}
