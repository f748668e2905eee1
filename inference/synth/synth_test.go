package synth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ember/inference/convert"
	"ember/inference/gguf"
	"ember/inference/quant"
)

func write(t testing.TB, p Params, opt Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := WriteTo(context.Background(), &b, p, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func preset(t testing.TB, name string) Params {
	t.Helper()
	p, err := Base(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func parse(t testing.TB, b []byte) *gguf.File {
	t.Helper()
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// layout renders a file's tensors as "name dims type" lines.
func layout(f *gguf.File) string {
	var sb strings.Builder
	for _, t := range f.Tensors {
		fmt.Fprintf(&sb, "%s %v %v\n", t.Name, t.Dims, t.Type)
	}
	return sb.String()
}

// TestTinyLayout checks the tensors (names, shapes, types) and metadata of the tiny
// presets in llama.cpp's Q4_K_M mix.
func TestTinyLayout(t *testing.T) {
	f := parse(t, write(t, preset(t, "tiny"), Options{FileType: "q4_k_m", Seed: "1"}))
	blk := func(i int, v, down string) string {
		return fmt.Sprintf(`blk.%[1]d.attn_norm.weight [256] F32
blk.%[1]d.attn_q.weight [256 256] Q4_K
blk.%[1]d.attn_k.weight [256 128] Q4_K
blk.%[1]d.attn_v.weight [256 128] %[2]s
blk.%[1]d.attn_output.weight [256 256] Q4_K
blk.%[1]d.ffn_norm.weight [256] F32
blk.%[1]d.ffn_gate.weight [256 768] Q4_K
blk.%[1]d.ffn_up.weight [256 768] Q4_K
blk.%[1]d.ffn_down.weight [768 256] %[3]s
`, i, v, down)
	}
	// use_more_bits(i, 2) picks layer 1 only.
	want := "token_embd.weight [256 512] Q4_K\n" + blk(0, "Q4_K", "Q4_K") + blk(1, "Q6_K", "Q6_K") +
		"output_norm.weight [256] F32\noutput.weight [256 512] Q6_K\n"
	if got := layout(f); got != want {
		t.Errorf("tiny q4_k_m:\n%s\nwant\n%s", got, want)
	}
	for key, want := range map[string]any{
		"general.architecture": "llama", "general.name": "synthetic-tiny", "general.file_type": uint64(15),
		"general.quantization_version": uint64(2), "general.alignment": uint64(32),
		"llama.vocab_size": uint64(512), "llama.context_length": uint64(2048), "llama.embedding_length": uint64(256),
		"llama.block_count": uint64(2), "llama.feed_forward_length": uint64(768), "llama.attention.head_count": uint64(4),
		"llama.attention.head_count_kv": uint64(2), "llama.attention.key_length": uint64(64),
		"llama.rope.dimension_count": uint64(64), "llama.rope.freq_base": 10000.0, "tokenizer.ggml.model": "llama",
		"tokenizer.ggml.bos_token_id": uint64(1), "tokenizer.ggml.eos_token_id": uint64(2),
	} {
		checkKV(t, f, key, want)
	}
	if d, _ := f.String("general.description"); !strings.Contains(d, "SYNTHETIC") {
		t.Errorf("description %q does not say the weights are synthetic", d)
	}
	if eps, _ := f.Float("llama.attention.layer_norm_rms_epsilon"); float32(eps) != 1e-5 {
		t.Errorf("eps %v", eps)
	}
	if toks, _ := f.Strings("tokenizer.ggml.tokens"); len(toks) != 512 {
		t.Errorf("%d tokens", len(toks))
	}
}

func checkKV(t *testing.T, f *gguf.File, key string, want any) {
	t.Helper()
	var got any
	var err error
	switch want.(type) {
	case string:
		got, err = f.String(key)
	case uint64:
		got, err = f.Uint(key)
	case float64:
		got, err = f.Float(key)
	}
	if err != nil || got != want {
		t.Errorf("%s = %v (%v), want %v", key, got, err, want)
	}
}

// TestTinyDeepseek2 checks the MLA + MoE layout: its types must be what llama.cpp's
// quantizer gives the F32 model (the golden of inference/convert), including the
// 8-expert rules (attn_output Q5_K -> Q5_1) and the row-length fallbacks.
func TestTinyDeepseek2(t *testing.T) {
	for _, ft := range []string{"Q4_K_M", "Q8_0", "Q4_0", "Q6_K", "Q2_K", "Q3_K_M", "Q4_K_S", "Q5_K_M"} {
		t.Run(ft, func(t *testing.T) {
			f := parse(t, write(t, preset(t, "tiny-deepseek2"), Options{FileType: ft, Seed: "2"}))
			c := llamaCppCase(t, "deepseek2-tiny-f32", ft)
			want := map[string]string{}
			for _, tn := range c.Tensors {
				want[tn.Name] = fmt.Sprintf("%v %s", tn.Dims, tn.Type)
			}
			if len(f.Tensors) != len(want) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(want))
			}
			for _, ti := range f.Tensors {
				if got := fmt.Sprintf("%v %v", ti.Dims, ti.Type); got != want[ti.Name] {
					t.Errorf("%s: %s, llama.cpp: %s", ti.Name, got, want[ti.Name])
				}
			}
		})
	}
	f := parse(t, write(t, preset(t, "tiny-deepseek2"), Options{FileType: "f32", Seed: "2"}))
	for key, want := range map[string]any{
		"deepseek2.attention.head_count_kv": uint64(1), "deepseek2.attention.key_length": uint64(80),
		"deepseek2.attention.value_length": uint64(64), "deepseek2.attention.key_length_mla": uint64(48),
		"deepseek2.attention.value_length_mla": uint64(32), "deepseek2.rope.dimension_count": uint64(16),
		"deepseek2.leading_dense_block_count": uint64(1), "deepseek2.expert_count": uint64(8),
		"deepseek2.expert_used_count": uint64(2), "deepseek2.expert_shared_count": uint64(1),
		"deepseek2.expert_feed_forward_length": uint64(128), "deepseek2.attention.kv_lora_rank": uint64(64),
		"deepseek2.attention.q_lora_rank": uint64(0), "deepseek2.expert_gating_func": uint64(1),
		"deepseek2.rope.scaling.type": "yarn", "deepseek2.rope.scaling.factor": 40.0,
		"deepseek2.rope.scaling.original_context_length": uint64(4096), "general.file_type": uint64(0),
	} {
		checkKV(t, f, key, want)
	}
	if m, _ := f.Float("deepseek2.rope.scaling.yarn_log_multiplier"); float32(m) != float32(0.1*0.707) {
		t.Errorf("yarn_log_multiplier %v", m)
	}
}

// llamaCppGolden is one case of ../convert/testdata/llamacpp_quantize.json: what
// llama.cpp's quantizer wrote for an input model and mix (see that folder's README).
type llamaCppGolden struct {
	Input      string `json:"input"`
	Ftype      string `json:"ftype"`
	FileSHA256 string `json:"file_sha256"`
	Tensors    []struct {
		Name   string   `json:"name"`
		Dims   []uint64 `json:"dims"`
		Type   string   `json:"type"`
		SHA256 string   `json:"sha256"`
	} `json:"tensors"`
}

// llamaCppCase finds a case of inference/convert's llama.cpp golden.
func llamaCppCase(t testing.TB, input, ftype string) llamaCppGolden {
	t.Helper()
	for _, c := range loadLlamaCpp(t) {
		if c.Input == input && c.Ftype == ftype {
			return c
		}
	}
	t.Fatalf("no llama.cpp case %s %s", input, ftype)
	return llamaCppGolden{}
}

func loadLlamaCpp(t testing.TB) []llamaCppGolden {
	t.Helper()
	b, err := os.ReadFile("../convert/testdata/llamacpp_quantize.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []llamaCppGolden
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestQuantizedWithLlamaCpp writes the three synthetic F32 models that llama.cpp's
// quantizer was run on for inference/convert's golden (tools/synth_gguf.py made them;
// ours must be the same bytes), quantizes them with convert.QuantizeFile into every mix
// llama.cpp wrote, and compares whole files: synth's F32 == the script's, and
// convert == llama.cpp on a 16-layer GQA model with tied embeddings and on MLA + MoE
// (both MLA layouts).
func TestQuantizedWithLlamaCpp(t *testing.T) {
	dir := t.TempDir()
	ds := preset(t, "tiny-deepseek2")
	ds.Name, ds.Desc = "synthetic-deepseek2-tiny", scriptDescription
	gqa, err := Base("", "")
	if err != nil {
		t.Fatal(err)
	}
	gqa.NEmbd, gqa.NLayer, gqa.NHead, gqa.NHeadKV, gqa.NFF, gqa.NVocab, gqa.Tied = 256, 16, 8, 2, 288, 300, true
	gqa.Desc = scriptDescription
	kvb := preset(t, "tiny-deepseek2")
	kvb.MLALayout, kvb.Desc = "kv_b", scriptDescription
	inputs := map[string]string{}
	for name, m := range map[string]struct {
		p    Params
		seed string
		gain int
	}{"deepseek2-tiny-f32": {ds, "11", 4}, "gqa16-f32": {gqa, "5", 0}, "deepseek2-tiny-kvb-f32": {kvb, "3", 0}} {
		path := filepath.Join(dir, name+".gguf")
		if _, err := Write(context.Background(), path, m.p, Options{FileType: "f32", Seed: m.seed, GainLog2: m.gain}); err != nil {
			t.Fatal(err)
		}
		inputs[name] = path
	}
	n := 0
	for _, c := range loadLlamaCpp(t) {
		in, ok := inputs[c.Input]
		if !ok {
			continue
		}
		n++
		t.Run(c.Input+"/"+c.Ftype, func(t *testing.T) {
			ft, err := convert.ParseFileType(c.Ftype)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, c.Input+"."+c.Ftype+".gguf")
			if _, err := convert.QuantizeFile(context.Background(), in, out, convert.Options{Type: ft, Threads: 2}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256(b)
			if hex.EncodeToString(h[:]) != c.FileSHA256 {
				f := parse(t, b)
				for i, want := range c.Tensors {
					got := f.Tensors[i]
					g := sha256.Sum256(f.TensorData(&got))
					if got.Name != want.Name || got.Type.String() != want.Type || hex.EncodeToString(g[:12]) != want.SHA256 {
						t.Errorf("%s %v differs from llama.cpp's %s %s", got.Name, got.Type, want.Name, want.Type)
					}
				}
				t.Fatalf("file differs from llama.cpp's")
			}
		})
	}
	if n != 22 {
		t.Errorf("%d cases, want 22", n)
	}
}

// TestDeterministic: equal seeds give equal files whatever the thread count; another
// seed gives other weights but the same layout.
func TestDeterministic(t *testing.T) {
	for _, name := range []string{"tiny", "tiny-deepseek2"} {
		p := preset(t, name)
		a := write(t, p, Options{FileType: "q4_k_m", Seed: "42", Threads: 1})
		b := write(t, p, Options{FileType: "q4_k_m", Seed: "42", Threads: 4})
		c := write(t, p, Options{FileType: "q4_k_m", Seed: "43", Threads: 2})
		if !bytes.Equal(a, b) {
			t.Errorf("%s: 1 and 4 threads give different files", name)
		}
		if bytes.Equal(a, c) || len(a) != len(c) || layout(parse(t, a)) != layout(parse(t, c)) {
			t.Errorf("%s: seeds 42 and 43: want other bytes, same layout", name)
		}
	}
}

// TestWeightsSane dequantizes every block type the filler makes and checks the weights
// are finite, centred and of trained-model size.
func TestWeightsSane(t *testing.T) {
	for _, gain := range []int{0, 4, 2} {
		fl, err := newFiller("s", gain)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1,
			quant.Q5_0, quant.Q5_1, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K} {
			n := 64 * 256
			size, _ := quant.RowBytes(typ, uint64(n))
			buf := make([]byte, size)
			fl.blocks(typ, 7, buf)
			w := make([]float32, n)
			if err := quant.Dequantize(typ, buf, w); err != nil {
				t.Fatal(err)
			}
			var s, s2 float64
			for _, x := range w {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%v: non-finite weight", typ)
				}
				s += float64(x)
				s2 += float64(x) * float64(x)
			}
			g := math.Ldexp(1, gain)
			rms, mean := math.Sqrt(s2/float64(n))/g, s/float64(n)/g
			if rms < 0.01 || rms > 0.05 || math.Abs(mean) > rms/3 {
				t.Errorf("gain 2^%d %v: rms %.4f mean %.4f (scaled back by the gain)", gain, typ, rms, mean)
			}
		}
	}
	for _, gain := range []int{-2, 22} { // a Q4_K d would be subnormal, an F16 weight infinite
		if _, err := newFiller("s", gain); err == nil {
			t.Errorf("gain 2^%d accepted", gain)
		}
	}
}

// TestPresets checks every preset's plan: tensor count, parameters and the size of its
// Q4_K_M data.
func TestPresets(t *testing.T) {
	// The script's numbers (its plan for q4_k_m), except tiny-deepseek2: llama.cpp's
	// 8-expert rule makes attn_output Q5_K -> Q5_1 where the script has Q5_0.
	for _, tc := range []struct {
		name    string
		tensors int
		params  uint64
		bytes   uint64 // q4_k_m tensor data
	}{
		{"llama3.2-1b", 146, 1235814400, 799862784},
		{"llama3.2-3b", 254, 3212749824, 2011539456},
		{"llama3.1-8b", 291, 8030261248, 4912898048},
		{"qwen2-0.5b", 290, 494032768, 391859712},
		{"qwen2-1.5b", 339, 1777088000, 1111370240},
		{"qwen2-7b", 339, 7615616512, 4677120000}, // the script's plan with these shapes
		{"deepseek-v2-lite", 404, 15706484224, 10363959296},
		{"tiny", 21, 1836288, 1130240},
		{"tiny-deepseek2", 44, 2787264, 1825280 + 3*1024*2},
	} {
		p := preset(t, tc.name)
		if err := p.check(); err != nil {
			t.Fatal(err)
		}
		ts, _, err := plan(&p, "q4_k_m")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var params, bytes uint64
		for _, x := range ts {
			params += elements(x.Dims)
			n, _ := quant.RowBytes(x.Type, elements(x.Dims))
			bytes += n
		}
		if len(ts) != tc.tensors || params != tc.params || bytes != tc.bytes {
			t.Errorf("%s: %d tensors, %d params, %d bytes; want %d, %d, %d",
				tc.name, len(ts), params, bytes, tc.tensors, tc.params, tc.bytes)
		}
	}
}

func TestVocab(t *testing.T) {
	toks, scores, types, err := Vocab(128256)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range toks {
		if seen[s] {
			t.Fatalf("duplicate token %q", s)
		}
		seen[s] = true
	}
	if len(toks) != 128256 || len(scores) != 128256 || len(types) != 128256 {
		t.Fatalf("sizes %d %d %d", len(toks), len(scores), len(types))
	}
	for i, want := range map[int]string{0: "<unk>", 1: "<s>", 2: "</s>", 3: "<0x00>", 258: "<0xFF>", 259: "\u2581", 260: "!", 261: "\u2581!"} {
		if toks[i] != want {
			t.Errorf("token %d = %q, want %q", i, toks[i], want)
		}
	}
	if types[0] != tokUnknown || types[1] != tokControl || types[3] != tokByte || types[300] != tokNormal {
		t.Errorf("types %v", types[:4])
	}
	if scores[258] != 0 || scores[260] != -1 || scores[128255] != -float32(128255-259) {
		t.Errorf("scores %v %v %v", scores[258], scores[260], scores[128255])
	}
	if _, _, _, err := Vocab(259); err == nil {
		t.Error("259 tokens accepted")
	}
}
