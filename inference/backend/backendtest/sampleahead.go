package backendtest

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/sample"
)

// RunSampleAhead checks a backend's Feeder.SampleAhead against its contract,
// sample.Draw.PickRow: each row's first K candidates (sample.TopK), sample.Draw.Pick,
// and sample.Greedy for a row without a candidate; Row draws from the whole row and
// Nucleus draws from its nucleus; any of them with penalties, for their seen tokens and
// the feed's ids (SeenFed). The rows have near-ties (equal values and neighbours a unit
// in the last place apart), NaNs and -Infs, rows of only those, rows with fewer
// candidates than K, flat rows (nuclei of many rounds); the draws every setting (greedy,
// K 1 to MaxTopK, Row, Nucleus, temperatures from 1e-4 to 40, top-p and min-p off,
// ordinary and at their edges, the uniform at 0 and just under 1). Several results queued before any is waited for each
// come out as their own draws give (the device keeps one buffer of draws), and a lookup
// through Fed reads them. Draws outside the contract are refused. It skips a backend
// without Feeder.
func RunSampleAhead(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	be, fd, newF32 := feederTest(t, newBackend)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 13))
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	rows := func(n, cols int) []float32 {
		v := make([]float32, n*cols)
		for r := range n {
			row := v[r*cols : (r+1)*cols]
			kind := rng.IntN(9)
			for i := range row {
				switch {
				case kind == 0 && r%3 == 0:
					row[i] = nan // no candidate: the argmax, 0
				case kind == 1 && r%3 == 0:
					row[i] = []float32{nan, inf}[rng.IntN(2)] // the first -Inf
				case kind == 2 && rng.IntN(cols) >= 3:
					row[i] = inf // at most a few candidates
				case rng.IntN(50) == 0:
					row[i] = []float32{nan, inf}[rng.IntN(2)]
				case i > 0 && rng.IntN(4) == 0:
					row[i] = math.Nextafter32(row[i-1], float32(rng.IntN(3)-1)) // a near-tie
				case kind == 3:
					row[i] = float32(rng.IntN(5)) // many ties
				case kind == 4:
					row[i] = float32(rng.NormFloat64() * 0.05) // flat: nuclei of many rounds
				default:
					row[i] = float32(rng.NormFloat64() * 2)
				}
			}
		}
		return v
	}
	// draws are n rows' draws; with fed (the feed's ids, or nil) some count the row's
	// fed id among the tokens they penalize.
	draws := func(n, cols int, fed []int32) []sample.Draw {
		d := make([]sample.Draw, n)
		for i := range d {
			switch rng.IntN(4) {
			case 0: // from the whole row
				d[i] = sample.Draw{Row: true, Temp: []float64{1e-3, 0.5, 1, 2.5, 40}[rng.IntN(5)],
					U: []float64{0, 1 - 0x1p-53, rng.Float64(), rng.Float64()}[rng.IntN(4)]}
			case 1: // from the whole row's nucleus
				d[i] = sample.Draw{Nucleus: true, Temp: []float64{1e-3, 0.5, 1, 2.5, 40}[rng.IntN(5)],
					TopP: float64([]float32{0, 0.5, 0.9, 0.95, 0.999, 0.999999, 1}[rng.IntN(7)]),
					MinP: float64([]float32{0, 0, 0.01, 0.05, 0.5, 1, 1.5}[rng.IntN(7)]),
					U:    []float64{0, 1 - 0x1p-53, rng.Float64(), rng.Float64()}[rng.IntN(4)]}
				if !(d[i].TopP > 0 && d[i].TopP < 1) && d[i].MinP == 0 {
					d[i].TopP = 0.95
				}
			default:
				k := []int{0, 1, 2, 5, 40, 64, backend.MaxTopK}[rng.IntN(7)]
				d[i] = sample.Draw{
					K:    k,
					Temp: []float64{1e-4, 0.1, 0.7, 1, 2.5, 40}[rng.IntN(6)],
					TopP: float64([]float32{0, 0.5, 0.9, 0.95, 0.999999, 1}[rng.IntN(6)]),
					MinP: float64([]float32{0, 0.01, 0.05, 0.5, 1, 1.5}[rng.IntN(6)]),
					U:    []float64{0, 1 - 0x1p-53, rng.Float64(), rng.Float64()}[rng.IntN(4)],
				}
			}
			if rng.IntN(2) == 0 { // penalties: seen tokens repeated, a few outside the row
				d[i].Pen = sample.Penalties{Repeat: []float32{1, 1.1, 0.8, 1.5}[rng.IntN(4)],
					Presence: []float32{0, 0.5, -0.25}[rng.IntN(3)], Frequency: []float32{0, 0.3, 2}[rng.IntN(3)]}
				if d[i].Pen == (sample.Penalties{Repeat: 1}) {
					d[i].Pen.Presence = 1
				}
				seen := []int{0, 1, 5, 64, 300, backend.MaxSeen}[rng.IntN(6)]
				if fed != nil && rng.IntN(2) == 0 {
					seen = min(seen, backend.MaxSeen-1)
					d[i].SeenFed = true
				}
				for range seen {
					id := int32(rng.IntN(min(cols, 40)))
					if rng.IntN(50) == 0 {
						id = []int32{-1, int32(cols), int32(cols + 7)}[rng.IntN(3)]
					}
					d[i].Seen = append(d[i].Seen, id)
				}
			}
		}
		return d
	}
	want := func(v []float32, d []sample.Draw, fed []int32) []int32 {
		cols := len(v) / len(d)
		ids := make([]int32, len(d))
		for r := range d {
			f := int32(-1)
			if d[r].SeenFed {
				f = fed[r]
			}
			ids[r] = d[r].PickRow(v[r*cols:(r+1)*cols], f)
		}
		return ids
	}
	check := func(what string, p backend.Pending, v []float32, d []sample.Draw, fed []int32) []int32 {
		t.Helper()
		got := make([]int32, len(d))
		if err := p.Wait(ctx, got); err != nil {
			t.Fatal(err)
		}
		w := want(v, d, fed)
		for r := range w {
			if got[r] != w[r] {
				t.Fatalf("%s: row %d (%+v): id %d, want %d", what, r, d[r], got[r], w[r])
			}
		}
		return got
	}

	t.Run("draws", func(t *testing.T) {
		for _, c := range []struct{ rows, cols int }{{1, 1}, {1, 50}, {3, 1000}, {2, 4097}, {3, 10000}, {17, 32000}, {64, 513}, {5, 151936}} {
			var fed []int32 // the last call's ids, in the feed
			for range 6 {
				v, d := rows(c.rows, c.cols), draws(c.rows, c.cols, fed)
				x := newF32(c.rows, c.cols, v)
				p, err := fd.SampleAhead(ctx, x, d)
				if err != nil {
					t.Fatal(err)
				}
				fed = check("SampleAhead", p, v, d, fed)
				be.Free(x)
			}
		}
	})

	t.Run("nucleus rounds", func(t *testing.T) {
		// Nuclei of many rounds of candidates, their boundaries among ties: rows of
		// three values (ties by the ten thousand) and flat rows, near all of them kept.
		const n, cols = 4, 40000
		v := make([]float32, n*cols)
		for i := range v {
			if i < 2*cols {
				v[i] = float32(rng.IntN(3))
			} else {
				v[i] = float32(rng.NormFloat64() * 0.01)
			}
		}
		x := newF32(n, cols, v)
		defer be.Free(x)
		for _, tp := range []float64{0.5, 0.999999} {
			d := make([]sample.Draw, n)
			for i := range d {
				d[i] = sample.Draw{Nucleus: true, Temp: 40, TopP: tp, U: rng.Float64()}
			}
			d[1].MinP, d[3].MinP = 0.99, 0.9999
			p, err := fd.SampleAhead(ctx, x, d)
			if err != nil {
				t.Fatal(err)
			}
			check("nucleus rounds", p, v, d, nil)
		}
	})

	t.Run("queued", func(t *testing.T) {
		// MaxPending steps queued, each with its own draws and a lookup through Fed,
		// before any is waited for.
		const n, vocab, width = 7, 700, 24
		tab := make([]float32, vocab*width)
		for i := range tab {
			tab[i] = float32(i)
		}
		table := newF32(vocab, width, tab)
		defer be.Free(table)
		type step struct {
			v   []float32
			d   []sample.Draw
			p   backend.Pending
			x   backend.Tensor
			out backend.Tensor
			fed []int32
		}
		var steps []step
		var fed []int32 // the step before's ids, which each step's SeenFed draws count
		for range backend.MaxPending {
			s := step{v: rows(n, vocab), d: draws(n, vocab, fed)}
			s.fed, fed = fed, want(s.v, s.d, fed)
			s.x, s.out = newF32(n, vocab, s.v), newF32(n, width, nil)
			var err error
			if s.p, err = fd.SampleAhead(ctx, s.x, s.d); err != nil {
				t.Fatal(err)
			}
			be.GetRows(s.out, table, fd.Fed(n))
			steps = append(steps, s)
		}
		for i, s := range steps {
			check("queued", s.p, s.v, s.d, s.fed)
			got := make([]float32, n*width)
			if err := be.ReadF32(ctx, s.out, got); err != nil {
				t.Fatal(err)
			}
			for r, id := range want(s.v, s.d, s.fed) {
				if g := got[r*width]; g != float32(int(id)*width) {
					t.Fatalf("step %d row %d: the lookup through Fed read row %g, want %d", i, r, g/width, id)
				}
			}
			be.Free(s.x)
			be.Free(s.out)
		}
	})

	t.Run("refused", func(t *testing.T) {
		x := newF32(2, 10, rows(2, 10))
		defer be.Free(x)
		for _, d := range [][]sample.Draw{{{K: 1}}, {{K: 1}, {K: backend.MaxTopK + 1, Temp: 1}}, {{K: -1}, {}},
			{{Row: true, K: 5, Temp: 1}, {}}, {{Row: true}, {}}, {{}, {Row: true, Temp: 1, TopP: 0.9}},
			{{}, {Nucleus: true, Temp: 1}}, {{}, {Nucleus: true, K: 3, Temp: 1, TopP: 0.9}}, {{}, {Nucleus: true, TopP: 0.9}},
			{{}, {K: 1, Temp: 1, Pen: sample.Penalties{Repeat: 2}, Seen: make([]int32, backend.MaxSeen+1)}}} {
			if _, err := fd.SampleAhead(ctx, x, d); err == nil {
				t.Fatalf("SampleAhead of 2 rows with draws %+v did not fail", d)
			}
		}
	})
}
