package sample

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestExpNeg: expNeg against math.Exp within 4 units in the last place over its range,
// its edges (0 and -0 give 1; below -708, NaN: 0; above 0 counts as 0), and its
// constants: 1/i! rounded, ln2Hi exact in k ln2Hi for every k it meets.
func TestExpNeg(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{0, math.Copysign(0, -1), -1e-300, -1e-12, -0.5 * math.Ln2, -math.Ln2, -1, -30, -700, -708}
	for range 200000 {
		xs = append(xs, -r.Float64()*708, -r.Float64()*r.Float64())
	}
	for _, x := range xs {
		got, want := expNeg(x), math.Exp(x)
		if d := math.Abs(got-want) / want; d > 4*0x1p-52 {
			t.Fatalf("expNeg(%v) = %v, math.Exp %v (relative error %.3g)", x, got, want, d)
		}
	}
	for _, c := range []struct{ x, want float64 }{{-708.5, 0}, {math.Inf(-1), 0}, {math.NaN(), 0}, {3, 1}, {math.Inf(1), 1}} {
		if got := expNeg(c.x); got != c.want {
			t.Errorf("expNeg(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	f := big.NewRat(1, 1)
	for i, v := range expTaylor {
		if i > 0 {
			f.Quo(f, big.NewRat(int64(i), 1))
		}
		if w, _ := f.Float64(); v != w {
			t.Errorf("expTaylor[%d] = %v, 1/%d! rounds to %v", i, v, i, w)
		}
	}
	if math.Float64bits(ln2Hi)&(1<<11-1) != 0 {
		t.Error("ln2Hi's last 11 bits are not zero: k ln2Hi is not exact for |k| up to 1,022")
	}
	if d := math.Abs(ln2Hi + ln2Lo - math.Ln2); d > 0x1p-53 {
		t.Errorf("ln2Hi + ln2Lo is %v from ln 2", d)
	}
}

// randomRow is a row of n logits with near-ties (values repeated and a few units in the
// last place apart) and, with rare odds, NaNs and -Infs.
func randomRow(r *rand.Rand, n int) []float32 {
	row := make([]float32, n)
	for i := range row {
		switch r.IntN(20) {
		case 0:
			row[i] = float32(math.NaN())
		case 1:
			row[i] = float32(math.Inf(-1))
		case 2, 3:
			if i > 0 {
				row[i] = math.Nextafter32(row[i-1], float32(r.IntN(3)-1))
				continue
			}
			fallthrough
		default:
			row[i] = float32(r.NormFloat64() * 3)
		}
	}
	return row
}

// randomParams are top-k settings of every kind Ahead draws for: temperatures from
// tiny to large, top-p and min-p off, ordinary and at their edges (min-p above 1 keeps
// nothing), top-k from 1 to past the row's candidates.
func randomParams(r *rand.Rand, seed uint64) Params {
	return Params{
		Temperature: []float32{1e-4, 0.1, 0.7, 1, 2.5, 40}[r.IntN(6)],
		TopK:        []int{1, 2, 5, 40, 64, 256}[r.IntN(6)],
		TopP:        []float32{0, 0.5, 0.9, 0.95, 0.999999, 1}[r.IntN(6)],
		MinP:        []float32{0, 0.01, 0.05, 0.5, 1, 1.5}[r.IntN(6)],
		Seed:        seed,
	}
}

// TestAheadPick: a token drawn through Ahead and Draw.Pick (and Draw.PickRow on the
// whole row) is SampleTop's (and so Sample's) from the same candidates with the same seed, token after token, the random
// source taken the same way; rows without a candidate say so, as SampleTop does.
func TestAheadPick(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		p := randomParams(r, uint64(trial))
		a, b := New(p), New(p)
		for tok := range 20 {
			row := randomRow(r, 300)
			if tok == 7 {
				for i := range row {
					row[i] = float32(math.NaN())
				}
			}
			ids, vals := make([]int32, p.TopK), make([]float32, p.TopK)
			TopK(row, ids, vals)
			d, ok := a.Ahead(len(row), false)
			if !ok || d.U < 0 || d.U >= 1 {
				t.Fatalf("trial %d: Ahead %+v, %v", trial, d, ok)
			}
			got, gotOK := d.Pick(ids, vals)
			want, wantOK := b.SampleTop(ids, vals)
			if !wantOK {
				want = b.Sample(append([]float32(nil), row...))
			}
			if !gotOK {
				got = Greedy(row)
			}
			if r := d.PickRow(row, -1); r != got {
				t.Fatalf("trial %d token %d (%+v): PickRow %d, Pick on TopK's candidates %d", trial, tok, p, r, got)
			}
			if gotOK != wantOK || got != want {
				t.Fatalf("trial %d token %d (%+v): Pick %d (%v), SampleTop %d (%v)", trial, tok, p, got, gotOK, want, wantOK)
			}
			a.Accept(got)
		}
	}
}

// TestOneUniformPerToken: a sampled token takes one uniform whether its draw needs it or
// not (a row of only NaNs, min-p above 1), so the tokens after it are the same.
func TestOneUniformPerToken(t *testing.T) {
	row := []float32{2, 1.5, 1, 0.5, 0, -1, -3}
	nans := []float32{float32(math.NaN()), float32(math.NaN())}
	for _, p := range []Params{{Temperature: 1, Seed: 3}, {Temperature: 1, TopK: 3, Seed: 3}, {Temperature: 1, MinP: 2, Seed: 3}} {
		a, b := New(p), New(p)
		a.Sample(append([]float32(nil), nans...))
		b.Sample(append([]float32(nil), row...))
		for i := range 50 {
			x, y := a.Sample(append([]float32(nil), row...)), b.Sample(append([]float32(nil), row...))
			if x != y {
				t.Fatalf("%+v: token %d is %d after a NaN row, %d after another", p, i+1, x, y)
			}
		}
	}
}

// TestAheadPenalties: a sampler with penalties (repeat, presence, frequency; windows of
// 1, 3, 64 and the whole history) draws through Ahead and Draw.PickRow what Sample draws
// on the same rows, token after token: greedy, top-k and whole-row draws, in steps
// queued a token ahead (the row fed the newest token, accepted after the draw is made:
// SeenFed) and in steps that are not, in any order. Tokens are drawn from a small
// vocabulary so they repeat.
func TestAheadPenalties(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for trial := range 200 {
		p := randomParams(r, uint64(trial))
		switch r.IntN(4) {
		case 0:
			p.Temperature = 0
		case 1:
			p.TopK, p.TopP, p.MinP = 0, 1, 0 // the whole row
		}
		p.Penalties = Penalties{
			Repeat:    []float32{0, 1, 1.1, 0.9, 1.5}[r.IntN(5)],
			Presence:  []float32{0, 0.5, -0.3}[r.IntN(3)],
			Frequency: []float32{0, 0.25, 1}[r.IntN(3)],
			LastN:     []int{0, 1, 3, -1}[r.IntN(4)],
		}
		const n = 40
		p.TopK = min(p.TopK, n-1) // below the vocabulary: a top-k draw
		a, b := New(p), New(p)
		for range 10 { // a prompt
			id := int32(r.IntN(n))
			a.Accept(id)
			b.Accept(id)
		}
		pend := int32(-1) // drawn ahead, not yet accepted by a
		for tok := range 60 {
			if pend >= 0 && r.IntN(3) == 0 { // a step that does not go ahead
				a.Accept(pend)
				pend = -1
			}
			if !a.AheadOK(n, 256, 1024) {
				t.Fatalf("trial %d (%+v): not AheadOK", trial, p)
			}
			d, ok := a.Ahead(n, pend >= 0)
			if !ok {
				t.Fatalf("trial %d (%+v): Ahead not ok", trial, p)
			}
			row := randomRow(r, n)
			got := d.PickRow(row, pend)
			if pend >= 0 {
				a.Accept(pend)
			}
			want := b.Sample(append([]float32(nil), row...))
			if got != want {
				t.Fatalf("trial %d token %d (%+v, draw %+v): PickRow %d, Sample %d", trial, tok, p, d, got, want)
			}
			pend = got
		}
	}
}
