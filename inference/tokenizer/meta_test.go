package tokenizer

import (
	"fmt"
	"strings"
	"testing"
)

// mapMeta is GGUF metadata held in a map; it implements metadata for tests.
type mapMeta map[string]any

func (m mapMeta) Has(k string) bool { _, ok := m[k]; return ok }

func get[T any](m mapMeta, k string) (T, error) {
	var zero T
	v, ok := m[k]
	if !ok {
		return zero, fmt.Errorf("no key %q", k)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("key %q has type %T", k, v)
	}
	return t, nil
}

func (m mapMeta) String(k string) (string, error)      { return get[string](m, k) }
func (m mapMeta) Bool(k string) (bool, error)          { return get[bool](m, k) }
func (m mapMeta) Strings(k string) ([]string, error)   { return get[[]string](m, k) }
func (m mapMeta) Float32s(k string) ([]float32, error) { return get[[]float32](m, k) }
func (m mapMeta) Int32s(k string) ([]int32, error)     { return get[[]int32](m, k) }
func (m mapMeta) Uint(k string) (uint64, error)        { return get[uint64](m, k) }

func TestLoadErrorsNameKey(t *testing.T) {
	base := func() mapMeta {
		return mapMeta{
			"tokenizer.ggml.model":  "gpt2",
			"tokenizer.ggml.pre":    "gpt-2",
			"tokenizer.ggml.tokens": []string{"a", "b", "ab"},
			"tokenizer.ggml.merges": []string{"a b"},
		}
	}
	if _, err := load(base()); err != nil {
		t.Fatalf("base: %v", err)
	}
	for _, c := range []struct {
		edit func(mapMeta)
		key  string
	}{
		{func(m mapMeta) { delete(m, "tokenizer.ggml.model") }, "tokenizer.ggml.model"},
		{func(m mapMeta) { m["tokenizer.ggml.model"] = "t5" }, "tokenizer.ggml.model"},
		{func(m mapMeta) { delete(m, "tokenizer.ggml.tokens") }, "tokenizer.ggml.tokens"},
		{func(m mapMeta) { m["tokenizer.ggml.tokens"] = []string{} }, "tokenizer.ggml.tokens"},
		{func(m mapMeta) { delete(m, "tokenizer.ggml.merges") }, "tokenizer.ggml.merges"},
		{func(m mapMeta) { m["tokenizer.ggml.pre"] = "no-such-pre" }, "tokenizer.ggml.pre"},
		{func(m mapMeta) { m["tokenizer.ggml.scores"] = []float32{1} }, "tokenizer.ggml.scores"},
		{func(m mapMeta) { m["tokenizer.ggml.token_type"] = []int32{1, 1} }, "tokenizer.ggml.token_type"},
		{func(m mapMeta) { m["tokenizer.ggml.add_bos_token"] = "yes" }, "tokenizer.ggml.add_bos_token"},
		{func(m mapMeta) { m["tokenizer.ggml.eos_token_id"] = "x" }, "tokenizer.ggml.eos_token_id"},
	} {
		m := base()
		c.edit(m)
		_, err := load(m)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("want an error naming %s, got %v", c.key, err)
		}
	}
	// An out-of-range id keeps the default; a small BPE vocabulary has no default BOS.
	m := base()
	m["tokenizer.ggml.eos_token_id"] = uint64(99)
	tok, err := load(m)
	if err != nil || tok.EOS() != -1 || tok.BOS() != -1 {
		t.Errorf("eos %d bos %d err %v", tok.EOS(), tok.BOS(), err)
	}
	if got := tok.Encode("abab", EncodeOptions{AddSpecial: true}); !equalIDs(got, []int32{2, 2}) {
		t.Errorf("Encode = %v", got)
	}
}
