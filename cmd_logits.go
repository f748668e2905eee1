package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"ember/app"
	"ember/inference/model"
	"ember/inference/sample"
)

// logitsOutput is the stable JSON interface of `ember logits` (fields may be added).
type logitsOutput struct {
	NVocab int         `json:"n_vocab"`
	Logits [][]float32 `json:"logits"`
	Greedy []int32     `json:"greedy"`
}

func parseTokens(s string) ([]int32, error) {
	var out []int32
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("-tokens: %q is not a token id", f)
		}
		out = append(out, int32(v))
	}
	if len(out) == 0 {
		return nil, errors.New("-tokens: no token ids given")
	}
	return out, nil
}

func cmdLogits(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("logits", flag.ContinueOnError)
	modelPath := fs.String("m", "", "model file (GGUF); the bundled model when empty")
	tokens := fs.String("tokens", "", "comma-separated token ids, evaluated as one batch from position 0")
	all := fs.Bool("all", false, "print the logits of every position, not just the last")
	greedy := fs.Int("greedy", 0, "then generate N tokens by argmax, fed back one at a time")
	be := fs.String("backend", "auto", "compute backend: auto (CUDA when an NVIDIA GPU is present, else CPU), cpu, cuda or ref")
	threads := fs.Int("t", 0, "CPU threads (0: one per core)")
	ngl := fs.Int("ngl", -1, app.NGLUsage)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	toks, err := parseTokens(*tokens)
	if err != nil {
		return err
	}
	if *greedy < 0 {
		return errors.New("-greedy must not be negative")
	}
	bo := app.BackendOptions{Name: *be, Threads: *threads}
	bo.NGL(*ngl)
	m, err := app.OpenModel(*modelPath, bo)
	if err != nil {
		return err
	}
	defer m.Close()
	out, err := computeLogits(ctx, m.Model, toks, *all, *greedy)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	return enc.Encode(out)
}

// computeLogits evaluates toks as one batch and then n greedy steps.
func computeLogits(ctx context.Context, m model.Model, toks []int32, all bool, n int) (*logitsOutput, error) {
	nv := m.Params().NVocab
	cache, err := m.NewCache(len(toks) + n)
	if err != nil {
		return nil, err
	}
	defer cache.Free()
	pos := make([]int32, len(toks))
	for i := range pos {
		pos[i] = int32(i)
	}
	t, err := m.Forward(ctx, cache, model.Batch{Tokens: toks, Pos: pos, AllLogits: all})
	if err != nil {
		return nil, err
	}
	flat := make([]float32, t.Rows()*nv)
	if err := m.Backend().ReadF32(ctx, t, flat); err != nil {
		return nil, err
	}
	out := &logitsOutput{NVocab: nv, Greedy: []int32{}}
	for r := 0; r < t.Rows(); r++ {
		out.Logits = append(out.Logits, flat[r*nv:(r+1)*nv])
	}
	last := append([]float32(nil), flat[len(flat)-nv:]...)
	for i := 0; i < n; i++ {
		id := sample.Greedy(last)
		out.Greedy = append(out.Greedy, id)
		if i == n-1 {
			break
		}
		t, err := m.Forward(ctx, cache, model.Batch{Tokens: []int32{id}, Pos: []int32{int32(len(toks) + i)}})
		if err != nil {
			return nil, err
		}
		if err := m.Backend().ReadF32(ctx, t, last); err != nil {
			return nil, err
		}
	}
	for _, row := range out.Logits {
		for _, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, errors.New("the model produced non-finite logits")
			}
		}
	}
	return out, nil
}
