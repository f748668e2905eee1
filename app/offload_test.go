package app

import (
	"context"
	"errors"
	"slices"
	"testing"

	"ember/assets"
	"ember/inference/backend"
	"ember/inference/backend/cpu"
	"ember/inference/backend/ref"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/model/archs"
)

func TestLayerOf(t *testing.T) {
	for name, want := range map[string]int{"blk.0.attn_q.weight": 0, "blk.31.ffn_down.weight": 31} {
		if l, ok := layerOf(name); !ok || l != want {
			t.Errorf("layerOf(%q) = %d, %v", name, l, ok)
		}
	}
	for _, name := range []string{"output.weight", "token_embd.weight", "blk.x.attn_q.weight", "blk.3", "blk.-1.a"} {
		if l, ok := layerOf(name); ok {
			t.Errorf("layerOf(%q) = %d, want none", name, l)
		}
	}
}

// TestGPULayers: an explicit count is taken (capped at the layers); the automatic one
// grows with the GPU's memory from none to all, one layer at a time.
func TestGPULayers(t *testing.T) {
	f, n := bundled(t)
	if got := gpuLayers(f, n, 2, 0); got != 2 {
		t.Errorf("want 2: %d", got)
	}
	if got := gpuLayers(f, n, 99, 0); got != n {
		t.Errorf("want 99 of %d: %d", n, got)
	}
	if got := gpuLayers(f, n, 0, 80<<30); got != n {
		t.Errorf("an 80 GiB GPU takes %d of %d layers", got, n)
	}
	if got := gpuLayers(f, n, 0, 1<<30); got != 0 {
		t.Errorf("a 1 GiB GPU (all reserve) takes %d layers", got)
	}
	seen := map[int]bool{}
	last := 0
	for mem := uint64(offloadReserve); mem < 2<<30; mem += 256 << 10 {
		k := gpuLayers(f, n, 0, mem)
		if k < last || k > n {
			t.Fatalf("%d bytes: %d layers after %d", mem, k, last)
		}
		seen[k], last = true, k
	}
	for k := 0; k <= n; k++ {
		if !seen[k] {
			t.Errorf("no GPU size gives %d of %d layers", k, n)
		}
	}
}

// TestNGL: llama.cpp's -ngl semantics on BackendOptions.
func TestNGL(t *testing.T) {
	for _, c := range []struct {
		ngl, layers int
		name        string
	}{{-1, 0, "auto"}, {0, 0, "cpu"}, {12, 12, "auto"}} {
		bo := BackendOptions{Name: "auto"}
		bo.NGL(c.ngl)
		if bo.GPULayers != c.layers || bo.Name != c.name {
			t.Errorf("-ngl %d: %+v", c.ngl, bo)
		}
	}
}

// TestLoadOffload: the split load (its "GPU" a second CPU backend here) places the last
// layers on it and computes the logits of the model on one backend.
func TestLoadOffload(t *testing.T) {
	f, n := bundled(t)
	logits := func(m model.Model) []float32 {
		c, err := m.NewCache(8)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		out, err := m.Forward(context.Background(), c, model.Batch{Tokens: []int32{1, 50, 60, 70}, Pos: []int32{0, 1, 2, 3}, AllLogits: true})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]float32, out.Rows()*out.Cols())
		if err := m.Backend().ReadF32(context.Background(), out, buf); err != nil {
			t.Fatal(err)
		}
		return buf
	}
	one, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	whole, err := archs.Load(f, one)
	if err != nil {
		t.Fatal(err)
	}
	want := logits(whole)
	whole.Close()

	gpu, m := offloadBundled(t, f, n, 2)
	pl := model.PlacementOf(m)
	if len(pl.Backends()) != 2 || pl[n-1] != gpu || pl[n-2] != gpu || pl[n-3] == gpu || m.Backend() != gpu {
		t.Fatalf("placement %s", describePlacement(m))
	}
	if got := logits(m); !slices.Equal(got, want) {
		t.Error("the split model's logits differ from the model on one backend")
	}
	if d := describePlacement(m); d != "cpu 3/5 layers, cpu 2/5 layers" {
		t.Errorf("placement %q", d)
	}
}

// bundled parses the bundled model and returns it with its layer count.
func bundled(t *testing.T) (*gguf.File, int) {
	t.Helper()
	f, err := gguf.Parse(assets.DefaultModel())
	if err != nil {
		t.Fatal(err)
	}
	n, err := archs.Layers(f)
	if err != nil {
		t.Fatal(err)
	}
	return f, n
}

// TestSplitNames: a split model's backend name and the key its saved KV blocks go by
// name both backends (and the layer counts), a whole one its backend alone.
func TestSplitNames(t *testing.T) {
	f, n := bundled(t)
	gpu, m := offloadBundled(t, f, n, 2)
	l := &Loaded{Backend: gpu, Model: m}
	if got := l.BackendName(); got != "cpu+cpu" {
		t.Errorf("BackendName = %q", got)
	}
	if got := l.computeKey(); got != "cpu3+cpu2" {
		t.Errorf("computeKey = %q", got)
	}
	whole, err := archs.Load(f, gpu)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	l = &Loaded{Backend: gpu, Model: whole}
	if l.BackendName() != "cpu" || l.computeKey() != "cpu" {
		t.Errorf("whole model: %q, %q", l.BackendName(), l.computeKey())
	}
}

// offloadBundled loads f with its last k of n layers on a second CPU backend standing in
// for the GPU (loadOffload), everything closed when the test ends.
func offloadBundled(t *testing.T, f *gguf.File, n, k int) (backend.Backend, model.Model) {
	t.Helper()
	gpu, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, c, err := loadOffload(f, gpu, n, k, BackendOptions{Threads: 1})
	if err != nil {
		gpu.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); c.Close(); gpu.Close() })
	return gpu, m
}

// TestNewBackendNote: "auto" takes a GPU that starts; a GPU present that does not start
// leaves the model on the CPU with the reason (the cuda: prefix dropped); no GPU at all
// is nothing to note; the named backends and an unknown name behave as before.
func TestNewBackendNote(t *testing.T) {
	gpuRef := ref.New()
	for _, c := range []struct {
		name, opt string
		gpu       func() (backend.Backend, bool, error)
		want      string // the backend's name
		note      string
		bad       bool
	}{
		{"starts", "auto", func() (backend.Backend, bool, error) { return gpuRef, true, nil }, "ref", "", false},
		{"none", "", func() (backend.Backend, bool, error) { return nil, false, nil }, "cpu", "", false},
		{"refused", "auto", func() (backend.Backend, bool, error) {
			return nil, true, errors.New("cuda: GTX 1080 has compute capability 6.1; the kernels need 8.0 or later")
		}, "cpu", "the GPU is not used: GTX 1080 has compute capability 6.1; the kernels need 8.0 or later", false},
		{"cpu named", "cpu", func() (backend.Backend, bool, error) { t.Error("the GPU was tried"); return nil, false, nil }, "cpu", "", false},
		{"ref named", "ref", func() (backend.Backend, bool, error) { return nil, false, nil }, "ref", "", false},
		{"unknown", "vulkan", func() (backend.Backend, bool, error) { return nil, false, nil }, "", "", true},
	} {
		be, note, err := newBackend(BackendOptions{Name: c.opt, Threads: 1}, c.gpu)
		if (err != nil) != c.bad || note != c.note || (be == nil) != c.bad || be != nil && be.Name() != c.want {
			t.Errorf("%s: newBackend = %v, %q, %v; want %s, %q", c.name, be, note, err, c.want, c.note)
		}
		if be != nil && be != gpuRef {
			be.Close()
		}
	}
}
