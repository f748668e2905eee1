package kvcache

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

var (
	randSeed  = flag.Uint64("kvcache.seed", 0, "TestRandomOps: run only this seed (0: the default seeds)")
	randSteps = flag.Int("kvcache.steps", 3000, "TestRandomOps: operations per run")
)

// TestRandomOps drives thousands of random operations against the Pool, through the
// shadow-memory harness, and against the naive model in lockstep. After every step it
// checks CheckIntegrity, the K/V every sequence and cached block reads back, and the
// model: free count, tree contents, the one-to-one identity of blocks across steps
// (sharing, dedup, copy-on-write), LRU stamps, and statistics. Expected failures
// (ErrOutOfBlocks) must happen exactly when the model says, and change nothing.
//
// Runs are deterministic per seed: go test -run TestRandomOps -kvcache.seed=N.
func TestRandomOps(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if *randSeed != 0 {
		seeds = []uint64{*randSeed}
	}
	steps := *randSteps
	if testing.Short() {
		steps /= 8
	}
	configs := []struct{ blocks, bs int }{{40, 4}, {17, 3}, {24, 1}, {64, 8}}
	for _, cfg := range configs {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("blocks=%d,bs=%d,seed=%d", cfg.blocks, cfg.bs, seed), func(t *testing.T) {
				randomRun(t, cfg.blocks, cfg.bs, seed, steps)
			})
		}
	}
}

// opLog is a testing.TB whose failures also print the last operations.
type opLog struct {
	testing.TB
	ops []string
}

func (l *opLog) add(op string) {
	if len(l.ops) == 30 {
		l.ops = l.ops[1:]
	}
	l.ops = append(l.ops, op)
}

func (l *opLog) Fatalf(format string, args ...any) {
	l.TB.Helper()
	l.TB.Fatalf("%s\nlast operations:\n  %s", fmt.Sprintf(format, args...), strings.Join(l.ops, "\n  "))
}

func (l *opLog) Fatal(args ...any) { l.TB.Helper(); l.Fatalf("%s", fmt.Sprint(args...)) }

// randomRun runs one seeded sequence of operations and returns the final state.
func randomRun(t *testing.T, nblocks, bs int, seed uint64, steps int) string {
	rng := rand.New(rand.NewPCG(seed, 0x6b76))
	log := &opLog{TB: t}
	h := newHarness(log, nblocks, bs)
	m := newModel(nblocks, bs)

	// A few shared prefixes (system prompts, earlier turns) over a small vocabulary, so
	// prompts share whole blocks, diverge inside chains, and duplicate each other.
	prefixes := make([][]int32, 4)
	for i := range prefixes {
		prefixes[i] = randToks(rng, 2+rng.IntN(6*bs), 6)
	}
	prompt := func() []int32 {
		pre := prefixes[rng.IntN(len(prefixes))]
		pre = pre[:len(pre)-rng.IntN(min(len(pre), bs+1))] // sometimes cut mid-block
		return cat(pre, randToks(rng, rng.IntN(3*bs+2), 3))
	}
	counts := map[string]int{}
	names := 0
	for step := range steps {
		op := pickOp(rng, len(h.seqs), len(h.raw))
		var desc string
		var err error
		var want bool // the model's verdict: the op succeeds
		unchanged := true
		var before string // state before an op that may fail
		if op == "append" || op == "fork" || op == "truncate" || op == "alloc" {
			before = h.snapshot()
		}
		switch op {
		case "new":
			names++
			name := fmt.Sprint("s", names)
			pr := prompt()
			desc = fmt.Sprintf("new %s %v", name, pr)
			mbs := m.match(pr)
			m.seqs = append(m.seqs, mseq{mbs: mbs, n: len(mbs) * bs})
			want = m.append(len(m.seqs)-1, len(pr)-len(mbs)*bs)
			var n int
			n, err = h.newSeq(name, pr)
			if n != len(mbs)*bs {
				log.Fatalf("step %d %s: matched %d, model %d", step, desc, n, len(mbs)*bs)
			}
			if n > 0 {
				counts["hit"]++
			}
			unchanged = false
		case "append":
			i := rng.IntN(len(h.seqs))
			tk := randToks(rng, 1+rng.IntN(2*bs), 3)
			desc = fmt.Sprintf("append %s %v", h.seqs[i].name, tk)
			want = m.append(i, len(tk))
			err = h.append(h.seqs[i], tk)
		case "fork":
			i := rng.IntN(len(h.seqs))
			names++
			desc = fmt.Sprintf("fork %s (len %d) s%d", h.seqs[i].name, h.seqs[i].s.Len(), names)
			want = m.fork(i)
			var cps []Copy
			cps, err = h.fork(h.seqs[i], fmt.Sprint("s", names))
			counts["copy"] += len(cps)
		case "truncate":
			i := rng.IntN(len(h.seqs))
			n := rng.IntN(h.seqs[i].s.Len() + 1)
			desc = fmt.Sprintf("truncate %s %d->%d", h.seqs[i].name, h.seqs[i].s.Len(), n)
			want = m.truncate(i, n)
			var cps []Copy
			cps, err = h.truncate(h.seqs[i], n)
			counts["copy"] += len(cps)
		case "release":
			i := rng.IntN(len(h.seqs))
			desc = "release " + h.seqs[i].name
			m.release(i)
			h.release(h.seqs[i])
			want = true
		case "insert":
			i := rng.IntN(len(h.seqs))
			hs := h.seqs[i]
			n := hs.s.Len()
			if rng.IntN(2) == 0 {
				n = rng.IntN(n + 1)
			}
			desc = fmt.Sprintf("insert %s %d", hs.name, n)
			prev := append([]int(nil), hs.s.Blocks()...)
			mc, ma := m.insert(i, hs.toks[:n])
			c, a := h.insert(hs, n)
			if c != mc || a != ma {
				log.Fatalf("step %d %s: cached %d added %d, model %d %d", step, desc, c, a, mc, ma)
			}
			for j, b := range hs.s.Blocks() {
				if b != prev[j] {
					counts["dedup"]++
				}
			}
			want = true
		case "probe":
			pr := prompt()
			desc = fmt.Sprintf("probe %v", pr)
			if n, mn := h.probe(pr), m.probe(pr); n != mn {
				log.Fatalf("step %d %s: matched %d, model %d", step, desc, n, mn)
			}
			want = true
		case "evict":
			n := 1 + rng.IntN(4)
			desc = fmt.Sprintf("evict %d", n)
			if got, mg := h.tr.Evict(n), m.evict(n); got != mg {
				log.Fatalf("step %d %s: evicted %d, model %d", step, desc, got, mg)
			}
			want = true
		case "alloc":
			desc = "alloc"
			want = m.alloc()
			err = h.alloc()
		case "free":
			i := rng.IntN(len(h.raw))
			desc = fmt.Sprintf("free %d", h.raw[i])
			m.freeRaw(i)
			h.free(i)
			want = true
		}
		log.add(desc)
		switch {
		case err != nil && !errors.Is(err, ErrOutOfBlocks):
			log.Fatalf("step %d %s: %v", step, desc, err)
		case (err == nil) != want:
			log.Fatalf("step %d %s: err %v, model expects success %v", step, desc, err, want)
		case err != nil && unchanged && h.snapshot() != before:
			log.Fatalf("step %d %s: failed but changed state", step, desc)
		}
		if err != nil {
			counts["oob"]++
		}
		h.check()
		m.compare(log, h)
	}
	counts["evicted"] = int(m.evicted)
	t.Logf("%d steps: %v", steps, counts)
	if steps >= 1000 {
		for _, k := range []string{"hit", "copy", "dedup", "oob", "evicted"} {
			if counts[k] == 0 && (k != "copy" || bs > 1) { // one-position blocks are never partial
				t.Errorf("no %s in %d steps: the random mix no longer covers it", k, steps)
			}
		}
	}
	return h.snapshot()
}

// TestRandomOpsDeterministic: the same seed gives the same run, block ids included.
func TestRandomOpsDeterministic(t *testing.T) {
	a, b := randomRun(t, 20, 4, 7, 400), randomRun(t, 20, 4, 7, 400)
	if a != b {
		t.Fatalf("two runs of seed 7 differ:\n%s\n%s", a, b)
	}
	if c := randomRun(t, 20, 4, 8, 400); c == a {
		t.Fatal("seeds 7 and 8 gave the same run")
	}
}

// pickOp chooses an operation by weight among those possible now.
func pickOp(rng *rand.Rand, nseqs, nraw int) string {
	type w struct {
		op string
		n  int
	}
	ops := []w{{"new", 14}, {"probe", 5}, {"evict", 3}, {"alloc", 2}}
	if nseqs > 0 {
		ops = append(ops, w{"append", 20}, w{"fork", 6}, w{"truncate", 7}, w{"release", 12}, w{"insert", 12})
	}
	if nseqs > 10 {
		ops[0].n = 1
	}
	if nraw > 0 {
		ops = append(ops, w{"free", 4})
	}
	total := 0
	for _, o := range ops {
		total += o.n
	}
	r := rng.IntN(total)
	for _, o := range ops {
		if r < o.n {
			return o.op
		}
		r -= o.n
	}
	panic("unreachable")
}

func randToks(rng *rand.Rand, n int, vocab int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = rng.Int32N(vocab)
	}
	return out
}
