package engine

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend/cpu"
	"ember/inference/backend/ref"
	"ember/inference/quant"
	"ember/inference/synth"
)

// TestKVType: Options.KVType "q8_0" makes the cache Q8_0 and generation runs on it
// (a synthetic model of 64-dim heads); an unknown type and a model whose heads are not
// whole 32-value blocks (stories260K's 8) are refused at New with clear errors.
func TestKVType(t *testing.T) {
	for _, c := range []struct {
		in   string
		want quant.Type
		ok   bool
	}{{"", quant.F16, true}, {"f16", quant.F16, true}, {"Q8_0", quant.Q8_0, true}, {"q4_0", 0, false}} {
		got, err := ParseKVType(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseKVType(%q) = %v, %v", c.in, got, err)
		}
	}
	p := synth.Presets["tiny"]()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: "f32", Seed: "kv"}); err != nil {
		t.Fatal(err)
	}
	req := Request{Prompt: "Once upon a time there was a little", MaxTokens: 12, IgnoreEOS: true}
	e16 := newEngineOn(t, path, ref.New(), Options{ContextSize: 64})
	e8 := newEngineOn(t, path, ref.New(), Options{ContextSize: 64, KVType: "q8_0"})
	if typ := e8.KVType(); typ != quant.Q8_0 {
		t.Fatalf("cache of %v", typ)
	}
	a, b := generate(t, e16, req), generate(t, e8, req)
	if b.last.Err != nil || len(b.ids) != 12 || b.last.Usage.PromptTokens != a.last.Usage.PromptTokens {
		t.Fatalf("q8_0: %d tokens, %v", len(b.ids), b.last.Err)
	}
	t.Logf("greedy tokens f16 %v, q8_0 %v", a.ids, b.ids)

	if _, err := New(e8.m, e8.tok, Options{KVType: "q4_0"}); err == nil || !strings.Contains(err.Error(), "q4_0") {
		t.Errorf("KVType q4_0: %v", err)
	}
	s := newStoriesOn(t, ref.New(), Options{ContextSize: 32})
	if _, err := New(s.m, s.tok, Options{ContextSize: 32, KVType: "q8_0"}); err == nil || !strings.Contains(err.Error(), "32") {
		t.Errorf("stories260K with a Q8_0 cache: %v", err)
	}
}

// TestKVTypeLatent: DeepSeek-V2's latent cache (one row a token, K and V the same
// tensor) in Q8_0, when its rows are whole 32-value blocks (a synthetic model of 112
// latent and 16 rope dims): greedy generation runs on ref and on the CPU backend, and
// the two agree on the first tokens.
func TestKVTypeLatent(t *testing.T) {
	p := synth.Presets["tiny-deepseek2"]()
	p.KVLoraRank = 112
	path := filepath.Join(t.TempDir(), "ds2.gguf")
	if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: "f32", Seed: "kv"}); err != nil {
		t.Fatal(err)
	}
	req := Request{Prompt: "Once upon a time there was", MaxTokens: 8, IgnoreEOS: true}
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	onRef := generate(t, newEngineOn(t, path, ref.New(), Options{ContextSize: 64, KVType: "q8_0"}), req)
	onCPU := generate(t, newEngineOn(t, path, be, Options{ContextSize: 64, KVType: "q8_0"}), req)
	if onRef.last.Err != nil || onCPU.last.Err != nil || len(onRef.ids) != 8 || len(onCPU.ids) != 8 {
		t.Fatalf("ref %v (%d tokens), cpu %v (%d tokens)", onRef.last.Err, len(onRef.ids), onCPU.last.Err, len(onCPU.ids))
	}
	if onRef.ids[0] != onCPU.ids[0] {
		t.Errorf("first token: ref %d, cpu %d", onRef.ids[0], onCPU.ids[0])
	}
	t.Logf("ref %v, cpu %v", onRef.ids, onCPU.ids)
}

// TestKVTypeBlocksSurviveRestart: a Q8_0 cache's blocks go to the store (as their Q8_0
// rows) and come back after a restart exactly: the next engine loads the shared prompt
// blocks and generates what a cold Q8_0 engine does, token for token.
func TestKVTypeBlocksSurviveRestart(t *testing.T) {
	p := synth.Presets["tiny"]()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: "f32", Seed: "kv"}); err != nil {
		t.Fatal(err)
	}
	base := "Once upon a time there was a little girl who lived in a village near the forest."
	r1 := Request{Prompt: base + " One day", MaxTokens: 6, IgnoreEOS: true}
	r2 := Request{Prompt: base + " Every morning", MaxTokens: 10, IgnoreEOS: true}
	opt := Options{ContextSize: 128, BlockSize: 4, KVType: "q8_0"}
	cold := generate(t, newEngineOn(t, path, ref.New(), opt), r2)

	store := &memBlocks{m: map[uint64][]byte{}}
	opt.Blocks = store
	first := newEngineOn(t, path, ref.New(), opt)
	generate(t, first, r1)
	first.Close()
	if first.Stats().DiskBlocksSaved == 0 {
		t.Fatal("nothing saved")
	}
	second := newEngineOn(t, path, ref.New(), opt)
	got := generate(t, second, r2)
	if second.Stats().DiskBlocksLoaded == 0 || got.last.Usage.CachedTokens == 0 {
		t.Fatalf("no block loaded: %+v, %d cached", second.Stats(), got.last.Usage.CachedTokens)
	}
	if !slices.Equal(got.ids, cold.ids) {
		t.Errorf("after a restart %v, cold %v", got.ids, cold.ids)
	}
}
