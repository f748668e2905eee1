package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"ember/inference/backend"
	"ember/inference/model"
)

// BenchOptions are what `ember bench` measures, as llama-bench does: prompt processing
// of PP tokens as one batch, and generation of TG tokens one at a time from an empty
// context, each repeated Reps times after one warm-up. Each step reads back what greedy
// generation does: the argmax where the backend finds it, else the logits.
//
// Generation runs as the engine's greedy decoding does: where the backend can take a
// step's token ids from the step before on the device (backend.Feeder; CUDA), step i+1
// is queued before step i's id is read, so the device never waits for the host between
// tokens; Sync turns that off (every step's id is read before the next step is queued,
// as llama-bench's loop does).
//
// Depth (llama-bench's -d) runs both after a context of that many tokens: they are
// processed once, untimed, before the warm-up, and every timed batch and step attends
// to them (prompt tokens and generated ones take the positions after them).
type BenchOptions struct {
	PP, TG, Reps int
	Depth        int
	Sync         bool
}

// BenchResult holds medians over the repetitions.
type BenchResult struct {
	PPTokS  float64   `json:"pp_tok_s"`
	TGTokS  float64   `json:"tg_tok_s"`
	PPRuns  []float64 `json:"pp_runs"`
	TGRuns  []float64 `json:"tg_runs"`
	PP      int       `json:"pp"`
	TG      int       `json:"tg"`
	Depth   int       `json:"depth,omitempty"`
	Reps    int       `json:"reps"`
	NParams int64     `json:"n_params"`
	Bytes   int64     `json:"model_bytes"`
	// ReadBytes are the weight bytes one decode step reads: every tensor but the token
	// embedding table, of which it reads one row (unless the output layer reuses it), and of
	// a mixture of experts only the expert_used_count routed experts.
	ReadBytes int64   `json:"read_bytes_per_token"`
	TGGBs     float64 `json:"tg_gb_s"` // ReadBytes * tg_tok_s
	// Ahead says generation was queued a step ahead of the host (BenchOptions).
	Ahead bool `json:"tg_ahead"`
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// depthBatch is the batch in which Bench processes the context of BenchOptions.Depth.
const depthBatch = 512

// benchTokens are deterministic, spread-out token ids (speed does not depend on them).
func benchTokens(n, vocab int) []int32 {
	t := make([]int32, n)
	for i := range t {
		t[i] = int32((i*7919 + 13) % vocab)
	}
	return t
}

// Bench measures l's model.
func Bench(ctx context.Context, l *Loaded, o BenchOptions) (*BenchResult, error) {
	if o.PP < 0 || o.TG < 0 || o.Depth < 0 || o.Reps < 1 || o.PP+o.TG == 0 {
		return nil, fmt.Errorf("bench: need -p or -n > 0, -r >= 1 and -d >= 0")
	}
	m := l.Model
	p := m.Params()
	d := o.Depth
	cache, err := m.NewCache(d + max(o.PP, o.TG, 1))
	if err != nil {
		return nil, err
	}
	defer cache.Free()
	res := &BenchResult{PP: o.PP, TG: o.TG, Depth: d, Reps: o.Reps, Bytes: l.File.Size()}
	_, untied := l.File.Tensor("output.weight")
	arch := l.File.Architecture()
	nExp, _ := l.File.Uint(arch + ".expert_count")
	nUsed, _ := l.File.Uint(arch + ".expert_used_count")
	for _, ti := range l.File.Tensors {
		res.NParams += int64(ti.Elements)
		switch {
		case ti.Name == "token_embd.weight" && untied:
		case strings.HasSuffix(ti.Name, "_exps.weight") && nExp > 0 && nUsed <= nExp:
			// A mixture of experts reads only the routed experts' slices.
			res.ReadBytes += int64(ti.Size / nExp * nUsed)
		default:
			res.ReadBytes += int64(ti.Size)
		}
	}
	// Each step ends as greedy generation does in the engine (scheduler.go): where the
	// backend has ArgMax, only the chosen token id comes back, else the logits row.
	logits, id := make([]float32, p.NVocab), make([]int32, 1)
	am, _ := m.Backend().(backend.ArgMaxer)
	step := func(toks []int32, start int) error {
		pos := make([]int32, len(toks))
		for i := range pos {
			pos[i] = int32(start + i)
		}
		out, err := m.Forward(ctx, cache, model.Batch{Tokens: toks, Pos: pos})
		if err != nil {
			return err
		}
		if am != nil {
			return am.ArgMax(ctx, out, id)
		}
		return m.Backend().ReadF32(ctx, out, logits)
	}
	// The context before the timed runs, in batches of depthBatch tokens.
	for i := 0; i < d; i += depthBatch {
		toks := benchTokens(min(depthBatch, d-i), p.NVocab)
		if err := step(toks, i); err != nil {
			return nil, fmt.Errorf("bench: the context of -d %d: %w", d, err)
		}
	}
	pp := func() (float64, error) {
		toks := benchTokens(o.PP, p.NVocab)
		t0 := time.Now()
		if err := step(toks, d); err != nil {
			return 0, err
		}
		return float64(o.PP) / time.Since(t0).Seconds(), nil
	}
	fd, ahead := model.FeederOf(m)
	ahead = ahead && !o.Sync
	res.Ahead = ahead
	// tgAhead is tg decoding ahead of the host: step i+1 takes step i's argmax on the
	// device, and the host reads step i's id while step i+1 runs (engine/ahead.go).
	tgAhead := func() (float64, error) {
		t0 := time.Now()
		var prev backend.Pending
		for i := 0; i < o.TG; i++ {
			b := model.Batch{Pos: []int32{int32(d + i)}, Fed: i > 0}
			if i == 0 {
				b.Tokens = benchTokens(1, p.NVocab)
			}
			out, err := m.Forward(ctx, cache, b)
			if err != nil {
				return 0, err
			}
			next, err := fd.ArgMaxAhead(ctx, out)
			if err != nil {
				return 0, err
			}
			if prev != nil {
				if err := prev.Wait(ctx, id); err != nil {
					return 0, err
				}
			}
			prev = next
		}
		if err := prev.Wait(ctx, id); err != nil {
			return 0, err
		}
		return float64(o.TG) / time.Since(t0).Seconds(), nil
	}
	tg := func() (float64, error) {
		if ahead {
			return tgAhead()
		}
		toks := benchTokens(o.TG, p.NVocab)
		t0 := time.Now()
		for i, t := range toks {
			if err := step([]int32{t}, d+i); err != nil {
				return 0, err
			}
		}
		return float64(o.TG) / time.Since(t0).Seconds(), nil
	}
	for r := -1; r < o.Reps; r++ { // r == -1 is the warm-up
		if o.PP > 0 {
			v, err := pp()
			if err != nil {
				return nil, fmt.Errorf("bench: prompt processing: %w", err)
			}
			if r >= 0 {
				res.PPRuns = append(res.PPRuns, v)
			}
		}
		if o.TG > 0 {
			if r < 0 {
				o2 := o.TG
				o.TG = min(o.TG, 16) // a short warm-up for generation
				_, err := tg()
				o.TG = o2
				if err != nil {
					return nil, fmt.Errorf("bench: generation: %w", err)
				}
				continue
			}
			v, err := tg()
			if err != nil {
				return nil, fmt.Errorf("bench: generation: %w", err)
			}
			res.TGRuns = append(res.TGRuns, v)
		}
	}
	res.PPTokS, res.TGTokS = median(res.PPRuns), median(res.TGRuns)
	res.TGGBs = float64(res.ReadBytes) * res.TGTokS / 1e9
	return res, nil
}
