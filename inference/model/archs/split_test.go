package archs

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"ember/assets"
	"ember/inference/backend"
	"ember/inference/backend/ref"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/quant"
)

// TestSplitLayers: a decoder whose layers are split over two backends (the partial GPU
// offload) computes what it computes on one: two reference backends, so the logits are
// equal bit for bit. Untied outputs (the goldens) and a tied one (stories260K, whose
// embedding the last part loads again); splits at the first layer, the middle and none.
func TestSplitLayers(t *testing.T) {
	files := map[string]func(t *testing.T) *gguf.File{
		"stories260K": func(t *testing.T) *gguf.File {
			f, err := gguf.Parse(assets.DefaultModel())
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
	}
	for _, name := range []string{"llama-tiny-q4_k_m", "qwen2-tiny-f16"} {
		files[name] = func(t *testing.T) *gguf.File {
			f, err := gguf.Open(goldenGGUF(t, name))
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	prompt := []int32{1, 23, 45, 67, 89, 101, 12, 34, 56}
	for name, open := range files {
		t.Run(name, func(t *testing.T) {
			f := open(t)
			defer f.Close()
			n, err := Layers(f)
			if err != nil {
				t.Fatal(err)
			}
			run := func(pl model.Placement) []float32 {
				m, err := LoadOn(f, pl)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				c, err := m.NewCache(len(prompt) + 4)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Free()
				out := forward(t, m, c, prompt, 0, true)
				for i, tok := range []int32{5, 7, 9, 11} { // decode steps
					out = append(out, forward(t, m, c, []int32{tok}, len(prompt)+i, false)...)
				}
				return out
			}
			a, b := ref.New(), ref.New()
			defer a.Close()
			defer b.Close()
			want := run(model.Uniform(a, n))
			for _, k := range []int{n - 1, n / 2, n} {
				if got := run(model.SplitLast(a, b, n, k)); !slices.Equal(got, want) {
					t.Errorf("last %d of %d layers on a second backend: logits differ", k, n)
				}
			}
		})
	}
}

// TestSplitPagedCache: a paged cache over two backends moves blocks (CopyBlock, and the
// ReadBlock / WriteBlock of the persistent prefix cache) as one on a single backend.
func TestSplitPagedCache(t *testing.T) {
	f, n, a, b := openSplit(t, "llama-tiny-q8_0")
	const bs = 4
	blocks := func(pl model.Placement) [][]byte {
		m, err := LoadOn(f, pl)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		c, err := model.NewPagedCacheOn(model.PlacementOf(m), m.Params(), 6, bs, 1, 3, quant.F16)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		toks := []int32{1, 2, 3, 4, 5, 6, 7}
		batch := model.Batch{Tokens: toks, Pos: []int32{0, 1, 2, 3, 4, 5, 6}, Seq: make([]int32, len(toks)),
			Tables: [][]int32{{0, 1}}, AllLogits: true}
		if _, err := m.Forward(context.Background(), c, batch); err != nil {
			t.Fatal(err)
		}
		if err := c.CopyBlock(1, 2, 3); err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for blk := range 3 {
			d, err := c.ReadBlock(context.Background(), blk)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		if err := c.WriteBlock(3, out[0]); err != nil {
			t.Fatal(err)
		}
		d, err := c.ReadBlock(context.Background(), 3)
		if err != nil {
			t.Fatal(err)
		}
		return append(out, d)
	}
	want := blocks(model.Uniform(a, n))
	got := blocks(model.SplitLast(a, b, n, n/2))
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("block %d differs on the split cache", i)
		}
	}
	if !bytes.Equal(want[3], want[0]) || bytes.Equal(want[0], make([]byte, len(want[0]))) {
		t.Error("WriteBlock then ReadBlock did not give the block back")
	}
}

// TestSplitRefused: an architecture that keeps all its layers on one backend
// (deepseek2) refuses a split placement with ErrNoSplit.
func TestSplitRefused(t *testing.T) {
	f, n, a, b := openSplit(t, "deepseek2-tiny-q4_k_m")
	if _, err := LoadOn(f, model.SplitLast(a, b, n, 1)); !errors.Is(err, ErrNoSplit) {
		t.Fatalf("deepseek2 split: %v, want ErrNoSplit", err)
	}
}

// openSplit opens golden model name and two reference backends, all closed when the
// test ends, and returns them with the model's layer count.
func openSplit(t *testing.T, name string) (*gguf.File, int, backend.Backend, backend.Backend) {
	t.Helper()
	f, err := gguf.Open(goldenGGUF(t, name))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Layers(f)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	a, b := ref.New(), ref.New()
	t.Cleanup(func() { a.Close(); b.Close(); f.Close() })
	return f, n, a, b
}
