package backendtest

import (
	"context"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

// RunFeeder checks a backend's backend.Feeder: ArgMaxAhead's ids equal sample.Greedy's
// for rows of several counts and widths (ties included) and for a source still being
// computed; a lookup queued after it reads the ids through Fed, and one queued after the
// next ArgMaxAhead reads the next ids, though neither was waited for yet (the steps of
// decoding ahead of the host); MaxPending results may wait at once and one more is
// refused; a result is waited for once, into as many ids as it has rows. It skips a
// backend without Feeder.
func RunFeeder(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	be, fd, newF32 := feederTest(t, newBackend)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 5))
	// logits are rows x cols values, ties likely when few is set.
	logits := func(rows, cols int, few bool) []float32 {
		v := make([]float32, rows*cols)
		for i := range v {
			if few {
				v[i] = float32(rng.IntN(4))
			} else {
				v[i] = float32(rng.NormFloat64())
			}
		}
		return v
	}
	greedy := func(v []float32, rows int) []int32 {
		cols := len(v) / rows
		ids := make([]int32, rows)
		for r := range ids {
			ids[r] = sample.Greedy(v[r*cols : (r+1)*cols])
		}
		return ids
	}
	equal := func(what string, got, want []int32) {
		t.Helper()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: row %d: id %d, want %d", what, i, got[i], want[i])
			}
		}
	}

	t.Run("ids", func(t *testing.T) {
		for _, c := range []struct{ rows, cols int }{{1, 1}, {1, 32000}, {3, 1000}, {37, 257}, {64, 151936}, {300, 64}} {
			for _, few := range []bool{false, true} {
				v := logits(c.rows, c.cols, few)
				x := newF32(c.rows, c.cols, v)
				p, err := fd.ArgMaxAhead(ctx, x)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]int32, c.rows)
				if err := p.Wait(ctx, got); err != nil {
					t.Fatal(err)
				}
				equal("ArgMaxAhead", got, greedy(v, c.rows))
				be.Free(x)
			}
		}
	})

	t.Run("computed", func(t *testing.T) {
		const rows, cols = 5, 4099
		a, b := logits(rows, cols, false), logits(rows, cols, false)
		xa, xb, sum := newF32(rows, cols, a), newF32(rows, cols, b), newF32(rows, cols, nil)
		defer func() { be.Free(xa); be.Free(xb); be.Free(sum) }()
		be.Add(sum, xa, xb)
		p, err := fd.ArgMaxAhead(ctx, sum)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int32, rows)
		if err := p.Wait(ctx, got); err != nil {
			t.Fatal(err)
		}
		s := make([]float32, len(a))
		for i := range s {
			s[i] = a[i] + b[i]
		}
		equal("ArgMaxAhead of a sum", got, greedy(s, rows))
	})

	t.Run("fed", func(t *testing.T) {
		// Two steps queued before either is waited for: each lookup reads its own
		// step's ids from the feed.
		const rows, vocab, width = 6, 513, 40
		tab := logits(vocab, width, false)
		table := newF32(vocab, width, tab)
		defer be.Free(table)
		var (
			srcs    [2][]float32
			outs    [2]backend.Tensor
			pends   [2]backend.Pending
			tensors []backend.Tensor
		)
		for s := range srcs {
			srcs[s] = logits(rows, vocab, s == 1)
			x := newF32(rows, vocab, srcs[s])
			outs[s] = newF32(rows, width, nil)
			tensors = append(tensors, x, outs[s])
			p, err := fd.ArgMaxAhead(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			pends[s] = p
			be.GetRows(outs[s], table, fd.Fed(rows))
		}
		for s := range srcs {
			ids := make([]int32, rows)
			if err := pends[s].Wait(ctx, ids); err != nil {
				t.Fatal(err)
			}
			want := greedy(srcs[s], rows)
			equal("step", ids, want)
			got := make([]float32, rows*width)
			if err := be.ReadF32(ctx, outs[s], got); err != nil {
				t.Fatal(err)
			}
			for r, id := range want {
				for c := 0; c < width; c++ {
					if g, w := got[r*width+c], tab[int(id)*width+c]; g != w {
						t.Fatalf("step %d row %d: the lookup through Fed read %g at column %d, want row %d's %g", s, r, g, c, id, w)
					}
				}
			}
		}
		for _, x := range tensors {
			be.Free(x)
		}
	})

	t.Run("limits", func(t *testing.T) {
		v := logits(2, 100, false)
		x := newF32(2, 100, v)
		defer be.Free(x)
		var ps []backend.Pending
		for range backend.MaxPending {
			p, err := fd.ArgMaxAhead(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		if _, err := fd.ArgMaxAhead(ctx, x); err == nil {
			t.Fatalf("ArgMaxAhead with %d results waiting did not fail", backend.MaxPending)
		}
		if err := ps[0].Wait(ctx, make([]int32, 3)); err == nil {
			t.Fatal("a wait of 2 rows into 3 ids did not fail")
		}
		want := greedy(v, 2)
		for _, p := range ps {
			got := make([]int32, 2)
			if err := p.Wait(ctx, got); err != nil {
				t.Fatal(err)
			}
			equal("waiting", got, want)
		}
		if err := ps[1].Wait(ctx, make([]int32, 2)); err == nil {
			t.Fatal("a second wait for one result did not fail")
		}
		// Every slot is free again.
		for range backend.MaxPending {
			p, err := fd.ArgMaxAhead(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Wait(ctx, make([]int32, 2)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// feederTest is what RunFeeder and RunSampleAhead start with: a backend from
// newBackend (closed when t ends) as a backend.Feeder, skipping t without one, and
// newF32, which makes an F32 tensor of rows x cols holding v (when not nil) on it.
func feederTest(t *testing.T, newBackend func(t *testing.T) backend.Backend) (backend.Backend, backend.Feeder,
	func(rows, cols int, v []float32) backend.Tensor) {
	be := newBackend(t)
	t.Cleanup(func() { be.Close() })
	fd, ok := be.(backend.Feeder)
	if !ok {
		t.Skipf("%s has no Feeder", be.Name())
	}
	newF32 := func(rows, cols int, v []float32) backend.Tensor {
		x, err := be.New(quant.F32, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			be.WriteF32(x, v)
		}
		return x
	}
	return be, fd, newF32
}
