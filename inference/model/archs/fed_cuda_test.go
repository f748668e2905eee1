package archs

import (
	"context"
	"slices"
	"sort"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/model"
)

// TestFedDecodeCUDA decodes greedily on the GPU twice from each golden model's prompt:
// reading each step's id before queuing the next (ArgMax), and a step ahead of the host
// (each step's tokens fed from the step before's ArgMaxAhead on the device, the id read
// while the next step runs). The ids must be the same, as must the logits of a last step
// after both, on a contiguous and on a paged cache. It skips without a CUDA driver.
func TestFedDecodeCUDA(t *testing.T) {
	skipNoCUDA(t)
	names := make([]string, 0)
	for name := range goldenModels(t) {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, paged := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/flat", true: "/paged"}[paged], func(t *testing.T) {
				g := readGolden(t, name)
				be, err := cuda.New(cuda.Options{})
				if err != nil {
					t.Fatal(err)
				}
				m := loadModel(t, goldenGGUF(t, name), be)
				fd, ok := model.FeederOf(m)
				if !ok {
					t.Fatal("a model on the GPU alone is not fed from it")
				}
				const steps = 24
				sync, lastSync := fedDecode(t, m, nil, g.Prompt, steps, paged)
				ahead, lastAhead := fedDecode(t, m, fd, g.Prompt, steps, paged)
				if !slices.Equal(sync, ahead) {
					t.Fatalf("ids read each step %v, decoded ahead %v", sync, ahead)
				}
				if !slices.Equal(lastSync, lastAhead) {
					t.Fatal("the last step's logits differ")
				}
			})
		}
	}
}

// fedDecode evaluates prompt, then decodes steps tokens greedily (ahead through fd when
// not nil) and evaluates the last one; it returns the ids and that step's logits.
func fedDecode(t *testing.T, m model.Model, fd backend.Feeder, prompt []int32, steps int, paged bool) ([]int32, []float32) {
	t.Helper()
	ctx := context.Background()
	n := len(prompt) + steps + 1
	var (
		c   *model.Cache
		err error
	)
	nb := (n + 15) / 16
	if paged {
		c, err = model.NewPagedCache(m.Backend(), m.Params(), nb, 16, 1, nb)
	} else {
		c, err = m.NewCache(n)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	batch := func(toks []int32, start int, fed bool) model.Batch {
		b := model.Batch{Tokens: toks, Pos: positions(start, max(len(toks), 1)), Fed: fed}
		if fed {
			b.Tokens = nil
		}
		if paged {
			blocks := make([]int32, (start+len(b.Pos)+15)/16)
			for i := range blocks {
				blocks[i] = int32(nb - 1 - i) // not in order: the table is read
			}
			b.Seq, b.Tables = make([]int32, len(b.Pos)), [][]int32{blocks}
		}
		return b
	}
	am := m.Backend().(backend.ArgMaxer)
	ids := make([]int32, 0, steps)
	id := make([]int32, 1)
	out, err := m.Forward(ctx, c, batch(prompt, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	var prev backend.Pending
	wait := func(p backend.Pending) {
		if err := p.Wait(ctx, id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id[0])
	}
	for i := 0; i < steps; i++ {
		if fd == nil {
			if err := am.ArgMax(ctx, out, id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id[0])
			out, err = m.Forward(ctx, c, batch(id, len(prompt)+i, false))
		} else {
			p, err := fd.ArgMaxAhead(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			out, err = m.Forward(ctx, c, batch(nil, len(prompt)+i, true))
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil {
				wait(prev)
			}
			prev = p
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if prev != nil {
		wait(prev)
	}
	last := make([]float32, out.Rows()*out.Cols())
	if err := m.Backend().ReadF32(ctx, out, last); err != nil {
		t.Fatal(err)
	}
	return ids, last
}
