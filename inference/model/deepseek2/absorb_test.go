package deepseek2

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ember/inference/backend/ref"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/model/goldentest"
	"ember/inference/quant"
)

// decompressed writes the F32 MLA file src as the attn_kv_b layout (one attn_kv_b per
// layer, the transposed attn_k_b rows then the attn_v_b rows of each head; MHA
// metadata), which runs the decompressed path.
func decompressed(t *testing.T, src string) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		if strings.HasSuffix(kv.Key, "_length_mla") {
			continue
		}
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	const H, kvr, nope, vd = 4, 64, 32, 32
	for k, v := range map[string]uint32{"head_count_kv": H, "key_length": nope + 16, "value_length": vd} {
		if err := w.SetKV(Arch+".attention."+k, v); err != nil {
			t.Fatal(err)
		}
	}
	f32 := func(name string) []float32 {
		ti, ok := f.Tensor(name)
		if !ok || ti.Type != quant.F32 {
			t.Fatalf("no F32 tensor %q", name)
		}
		out := make([]float32, ti.Elements)
		if err := quant.Dequantize(quant.F32, f.TensorData(ti), out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, ti := range f.Tensors {
		name := ti.Name
		switch {
		case strings.HasSuffix(name, "attn_v_b.weight"):
			continue
		case strings.HasSuffix(name, "attn_k_b.weight"):
			blk := strings.TrimSuffix(name, "attn_k_b.weight")
			kb, vb := f32(name), f32(blk+"attn_v_b.weight") // [H][kvr][nope], [H][vd][kvr]
			kvb := make([]byte, 0, H*(nope+vd)*kvr*4)
			for h := 0; h < H; h++ {
				for j := 0; j < nope; j++ {
					for c := 0; c < kvr; c++ {
						kvb = binary.LittleEndian.AppendUint32(kvb, math.Float32bits(kb[(h*kvr+c)*nope+j]))
					}
				}
				for j := 0; j < vd; j++ {
					for c := 0; c < kvr; c++ {
						kvb = binary.LittleEndian.AppendUint32(kvb, math.Float32bits(vb[(h*vd+j)*kvr+c]))
					}
				}
			}
			if err := w.AddTensor(blk+"attn_kv_b.weight", quant.F32, []uint64{kvr, H * (nope + vd)}, kvb); err != nil {
				t.Fatal(err)
			}
		default:
			if err := w.AddTensor(name, ti.Type, ti.Dims, f.TensorData(&ti)); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "kvb.gguf")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAbsorbedEqualsDecompressed: the same weights give the same logits through the
// latent cache with absorbed up-projections and through decompressed per-head keys
// and values; they differ only in what is rounded to f16 (the latent or the keys and
// values), far below the f32 goldens' bound.
func TestAbsorbedEqualsDecompressed(t *testing.T) {
	src := goldenGGUF(t, "deepseek2-tiny-f32")
	mla := loadPath(t, src, ref.New())
	mha := loadPath(t, decompressed(t, src), ref.New())
	if !mla.(*Model).cfg.mla || mha.(*Model).cfg.mla {
		t.Fatal("want one MLA model and one attn_kv_b model")
	}
	nv, n := mla.Params().NVocab, len(prompt)
	logits := func(m model.Model) []float32 {
		c, err := m.NewCache(n)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		return run(t, m, c, model.Batch{Tokens: prompt, Pos: positions(0, n), AllLogits: true})
	}
	a, b := logits(mla), logits(mha)
	worst := 0.0
	for i := 0; i < n; i++ {
		e := goldentest.NMSE(b[i*nv:(i+1)*nv], a[i*nv:(i+1)*nv])
		worst = max(worst, e)
		if e > 5e-4 || math.IsNaN(e) {
			t.Errorf("position %d: NMSE %.3g", i, e)
		}
	}
	t.Logf("absorbed vs decompressed: max NMSE %.2e over %d positions", worst, n)
}
