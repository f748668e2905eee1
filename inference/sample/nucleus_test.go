package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// oracleNucleus is drawNucleus's definition written plainly: every candidate sorted,
// the total weight by a recursive pairwise sum over the runs' sums padded to a power of
// two, the walk and the draw. It also returns how many candidates it kept.
func oracleNucleus(row []float32, t float32, tp, mp, u float64) (int32, int) {
	maxL := float32(math.Inf(-1))
	for _, v := range row {
		if v > maxL {
			maxL = v
		}
	}
	if math.IsInf(float64(maxL), 0) {
		return Greedy(row), 0
	}
	cut := float64(maxL - float32(30*t))
	weight := func(v float32) float64 {
		if float64(v) >= cut {
			return expNeg((float64(v) - float64(maxL)) / float64(t))
		}
		return 0
	}
	var sums []float64
	for lo := 0; lo < len(row); lo += RowSegment {
		s := 0.0
		for _, v := range row[lo:min(lo+RowSegment, len(row))] {
			s += weight(v)
		}
		sums = append(sums, s)
	}
	for len(sums)&(len(sums)-1) != 0 {
		sums = append(sums, 0)
	}
	var tree func(s []float64) float64
	tree = func(s []float64) float64 {
		if len(s) == 1 {
			return s[0]
		}
		return tree(s[:len(s)/2]) + tree(s[len(s)/2:])
	}
	var c []int
	for i, v := range row {
		if float64(v) >= cut {
			c = append(c, i)
		}
	}
	sort.Slice(c, func(a, b int) bool {
		va, vb := row[c[a]], row[c[b]]
		return va > vb || (va == vb && c[a] < c[b])
	})
	target := tp * tree(sums)
	n, total := len(c), 0.0
	for i, id := range c {
		e := weight(row[id])
		if mp > 0 && e < mp {
			n = i
			break
		}
		total += e
		if tp > 0 && tp < 1 && total >= target {
			n = i + 1
			break
		}
	}
	if n == 0 {
		return Greedy(row), 0
	}
	r := u * total
	for _, id := range c[:n] {
		if r -= weight(row[id]); r < 0 {
			return int32(id), n
		}
	}
	return int32(c[n-1]), n
}

// nucleusRow is a test row of n logits: peaked (a few tokens hold the mass), flat (the
// nucleus runs past a round of candidates), with ties, with NaNs and -Infs, or of
// values around 2^20 (where drawRow's cut, rounded to a float32, may fall more than
// negligible temperatures below the largest).
func nucleusRow(r *rand.Rand, n, mode int) []float32 {
	row := make([]float32, n)
	for i := range row {
		switch mode {
		case 0:
			row[i] = float32(r.NormFloat64() * 6)
		case 1:
			row[i] = float32(r.NormFloat64() * 0.2)
		case 2:
			row[i] = float32(r.IntN(7)) * 0.5
		case 4: // a unit in the last place past half a temperature: the cut rounds below
			row[i] = float32(1<<20 + float64(r.IntN(3))*0.125)
		default:
			switch r.IntN(9) {
			case 0:
				row[i] = float32(math.NaN())
			case 1:
				row[i] = float32(math.Inf(-1))
			default:
				row[i] = float32(r.NormFloat64() * 2)
			}
		}
	}
	return row
}

// TestDrawNucleus: drawNucleus draws the oracle's token on rows of 1 to 151,936 logits,
// peaked, flat, tied and with NaNs, for top-p and min-p alone and together, uniforms at
// 0, just under 1 and between; some nuclei run past the first round of candidates.
func TestDrawNucleus(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	params := []struct{ t, tp, mp float64 }{
		{0.7, 0.9, 0}, {1, 0.95, 0}, {1.3, 0.999, 0}, {0.6, 0, 0.05}, {1, 0.5, 0.01},
		{0.8, 0.95, 0.05}, {1, 1, 0.2}, {1, 0, 1.5}, {0.1, 0.3, 0}, {0.0021, 0, 1e-30},
	}
	past, fewer := 0, 0
	var w []float64
	var c []candidate
	for _, n := range []int{1, 2, 7, 33, 300, 4097, 32000, 151936} {
		for mode := range 5 {
			row := nucleusRow(r, n, mode)
			for _, p := range params {
				for _, u := range []float64{0, 0.5, r.Float64(), r.Float64(), math.Nextafter(1, 0)} {
					name := fmt.Sprintf("n %d mode %d %+v u %v", n, mode, p, u)
					want, kept := oracleNucleus(row, float32(p.t), p.tp, float32asF64(p.mp), u)
					var got int32
					got, w, c = drawNucleus(row, float32(p.t), p.tp, float32asF64(p.mp), u, w, c)
					if got != want {
						t.Fatalf("%s: drew %d, want %d (kept %d)", name, got, want, kept)
					}
					if _, n, _, _ := nucleus(row, float32(p.t), p.tp, float32asF64(p.mp), nil, nil); n != kept {
						t.Fatalf("%s: kept %d, want %d", name, n, kept)
					}
					d := Draw{Nucleus: true, Temp: p.t, TopP: p.tp, MinP: float32asF64(p.mp), U: u}
					if id := d.PickRow(row, -1); id != want {
						t.Fatalf("%s: PickRow drew %d, want %d", name, id, want)
					}
					if kept > nucleusRound {
						past++
					} else if kept > 0 {
						fewer++
					}
				}
			}
		}
	}
	if past == 0 || fewer == 0 {
		t.Fatalf("%d draws kept more than a round of candidates, %d fewer: want both", past, fewer)
	}
}

// float32asF64 is v rounded to float32, as a sampler's parameters are.
func float32asF64(v float64) float64 { return float64(float32(v)) }

// TestNucleusNearFilter: the nucleus keeps the tokens the plain sorted filter (softmax,
// then top-p and min-p on probabilities) keeps, but for a rounding's difference at the
// edge now and then.
func TestNucleusNearFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	total, same := 0, 0
	for i := range 300 {
		row := nucleusRow(r, 1000+i, i%4)
		for _, p := range []Params{{Temperature: 0.8, TopP: 0.9}, {Temperature: 1, MinP: 0.05}, {Temperature: 0.7, TopP: 0.95, MinP: 0.02}} {
			want := oracleFilter(row, p)
			c, n, _, _ := nucleus(row, p.Temperature, float64(p.TopP), float64(p.MinP), nil, nil)
			total++
			if n != len(want) {
				continue
			}
			ok := true
			for j := range n {
				ok = ok && c[j].id == want[j].id
			}
			if ok {
				same++
			}
		}
	}
	if same < total-total/100 {
		t.Fatalf("%d of %d nuclei equal the sorted filter's", same, total)
	}
}

// TestNucleusFrequencies: a sampler with top-p draws the nucleus's tokens in proportion
// to their probabilities and nothing else (chi-square, 3 degrees of freedom).
func TestNucleusFrequencies(t *testing.T) {
	row := []float32{2, 1.5, 1, 0.5, -3, -4, -5}
	s := New(Params{Temperature: 1, TopP: 0.9, Seed: 3})
	counts := map[int32]int{}
	const draws = 40000
	for range draws {
		counts[s.Sample(append([]float32(nil), row...))]++
	}
	// The nucleus: tokens 0-3 (their mass reaches 0.9 of the whole at token 3).
	var w [4]float64
	sum := 0.0
	for i := range w {
		w[i] = math.Exp(float64(row[i]) - 2)
		sum += w[i]
	}
	chi := 0.0
	for i := range w {
		e := draws * w[i] / sum
		chi += (float64(counts[int32(i)]) - e) * (float64(counts[int32(i)]) - e) / e
	}
	if len(counts) != 4 || chi > 16.3 { // p = 0.001 at 3 degrees of freedom
		t.Fatalf("counts %v, chi-square %.1f", counts, chi)
	}
}
