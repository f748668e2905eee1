package cuda_test

import (
	"context"
	"strings"
	"testing"

	"ember/inference/engine"
	"ember/inference/gguf"
	"ember/inference/model/archs"
	"ember/inference/quant"
	"ember/inference/tokenizer"
)

// TestOutOfMemoryKeepsServing: an allocation the GPU cannot hold fails with an error
// that names it, and the backend, and an engine on it, go on working: a KV cache of a
// billion positions is refused, the next engine serves.
func TestOutOfMemoryKeepsServing(t *testing.T) {
	b := newOrSkip(t)
	defer b.Close()
	_, err := b.New(quant.F32, 1<<20, 1<<16) // 256 GiB
	if err == nil || !strings.Contains(err.Error(), "cuMemAlloc") {
		t.Fatalf("a 256 GiB tensor: %v, want a cuMemAlloc error", err)
	}
	t.Logf("256 GiB tensor: %v", err)
	x, err := b.New(quant.F32, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteF32(x, []float32{1, 2, 3, 4})
	b.Add(x, x, x)
	got := make([]float32, 4)
	if err := b.ReadF32(context.Background(), x, got); err != nil || got[3] != 8 {
		t.Fatalf("after the failed allocation: %v %v", got, err)
	}

	f, err := gguf.Open("../../../assets/stories260K.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := archs.Load(f, b)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.New(m, tok, engine.Options{ContextSize: 256, CacheTokens: 1 << 30}); err == nil {
		t.Fatal("a KV cache of 2^30 positions was allocated")
	} else {
		t.Logf("KV cache of 2^30 positions: %v", err)
	}
	e, err := engine.New(m, tok, engine.Options{ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ch, err := e.Generate(context.Background(), engine.Request{Tokens: []int32{1}, MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var last engine.Event
	for ev := range ch {
		if !ev.Done {
			n++
		}
		last = ev
	}
	if n != 8 || last.Err != nil {
		t.Fatalf("after the refused cache: %d tokens, %v", n, last.Err)
	}
}
