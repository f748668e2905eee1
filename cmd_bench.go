package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	"ember/app"
	"ember/inference/backend/cpu"
	"ember/inference/sample"
)

// benchOutput is the stable JSON interface of `ember bench -json` (fields may be added).
type benchOutput struct {
	Model   string  `json:"model"`
	Backend string  `json:"backend"`
	ISA     string  `json:"isa,omitempty"`
	Threads int     `json:"threads"`
	LoadS   float64 `json:"load_s"`
	Layers  string  `json:"layers"` // where the layers run, e.g. "cpu 12/32 layers, cuda 20/32 layers"
	*app.BenchResult
}

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	modelPath := fs.String("m", "", "model file (GGUF); the bundled model when empty")
	pp := fs.Int("p", 512, "prompt tokens, processed as one batch (0 skips)")
	tg := fs.Int("n", 128, "tokens generated one at a time from an empty context (0 skips)")
	depth := fs.Int("d", 0, "run -p and -n after a context of this many tokens (llama-bench's -d), processed untimed first")
	threads := fs.Int("t", 0, "CPU threads (0: one per core)")
	ngl := fs.Int("ngl", -1, app.NGLUsage)
	reps := fs.Int("r", 3, "repetitions (the median is reported)")
	be := fs.String("backend", "auto", "compute backend: auto (CUDA when an NVIDIA GPU is present, else CPU), cpu, cuda or ref")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the measurement to this file")
	syncTG := fs.Bool("sync", false, "read each step's tokens before queuing the next (default: where the backend allows, greedy, top-k and whole-row sampled steps are queued a step ahead of the host, as the engine decodes)")
	var streamList listFlag
	fs.Var(&streamList, "streams", "serving bench instead: decode tok/s summed over these numbers of concurrent streams (e.g. 1,4,16), -p prompt and -n generated tokens each")
	restore := fs.Int("restore", 0, "serving bench: time the next turn of a conversation of this many tokens after a restart, cold and from the persistent prefix cache")
	prefix := fs.Int("prefix", 0, "serving bench: also time the first token of a request sharing this many prompt tokens with an earlier one, against a cold one")
	lookup := fs.Int("lookup", 0, "serving bench: speculative decoding by prompt lookup, at most this many draft tokens a step (0: off)")
	kvType := fs.String("kv-type", "f16", "serving bench: KV-cache type, f16 or q8_0")
	sampled := fs.Bool("sample", false, "serving bench: the streams draw their tokens as the app's chats do (temperature 0.7, top-k 40, top-p 0.95, min-p 0.05; each stream its own seed) instead of greedily")
	temp := fs.Float64("temp", 0, "serving bench: the streams draw at this temperature from the whole vocabulary (no top-k, top-p or min-p: what an OpenAI client that sets only the temperature asks for; each stream its own seed) instead of greedily")
	topP := fs.Float64("top-p", 0, "serving bench: with -temp, draw from the nucleus of this probability (top-p, no top-k: what an OpenAI client that sends top_p asks for)")
	penalty := fs.Float64("penalty", 0, "serving bench: with -sample or -temp, a repeat penalty over each stream's last 64 tokens too (Ollama's default is 1.1)")
	warmup := fs.Bool("warmup", true, "serving bench: run the streams once untimed first (other prompts of the same lengths), so the figure is the steady state")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *reps < 1 || *pp < 0 || *tg < 0 || *depth < 0 || *lookup < 0 || *temp < 0 {
		return errors.New("-r must be at least 1 and -p, -n, -d, -lookup, -temp not negative")
	}
	if *depth > 0 && (len(streamList) > 0 || *prefix > 0 || *restore > 0) {
		return errors.New("-d is for the prompt and generation bench, not -streams, -prefix or -restore")
	}
	if *temp > 0 && *sampled {
		return errors.New("-temp and -sample are two ways of drawing: give one")
	}
	if *topP != 0 && (*temp <= 0 || *topP < 0 || *topP > 1) {
		return errors.New("-top-p takes -temp, and a probability from 0 to 1")
	}
	t0 := time.Now()
	bo := app.BackendOptions{Name: *be, Threads: *threads}
	bo.NGL(*ngl)
	m, err := app.OpenModel(*modelPath, bo)
	if err != nil {
		return err
	}
	defer m.Close()
	out := benchOutput{Model: *modelPath, Backend: m.Backend.Name(), LoadS: time.Since(t0).Seconds(), Threads: 1,
		Layers: m.Placement}
	noteGPU(stderr, m)
	if *modelPath == "" {
		out.Model = m.Name
	}
	if c, ok := m.Backend.(*cpu.Backend); ok {
		out.ISA, out.Threads = c.ISA(), c.Threads()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if len(streamList) > 0 || *prefix > 0 || *restore > 0 {
		o := app.ServeBenchOptions{Prompt: max(*pp, 1), Gen: max(*tg, 2), Prefix: *prefix, Restore: *restore, Lookup: *lookup, KVType: *kvType,
			Warmup: *warmup, SyncSteps: *syncTG}
		if *sampled {
			o.Sampling = app.DefaultSampling()
		}
		if *temp > 0 {
			o.Sampling = sample.Params{Temperature: float32(*temp), TopP: float32(*topP)}
		}
		if *penalty != 0 {
			o.Sampling.Penalties = sample.Penalties{Repeat: float32(*penalty), LastN: 64}
		}
		return serveBench(ctx, m, streamList, o, out, *asJSON, stdout)
	}
	out.BenchResult, err = app.Bench(ctx, m, app.BenchOptions{PP: *pp, TG: *tg, Depth: *depth, Reps: *reps, Sync: *syncTG})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "| model | size | params | backend | threads | test | tok/s |\n|---|---|---|---|---|---|---|\n")
	row := func(test string, v float64, runs []float64) {
		fmt.Fprintf(stdout, "| %s | %.1f MiB | %.2f M | %s %s | %d | %s | %.2f (runs %v) |\n",
			filepath.Base(out.Model), float64(out.Bytes)/(1<<20), float64(out.NParams)/1e6,
			out.Backend, out.ISA, out.Threads, test, v, fmtRuns(runs))
	}
	at := ""
	if *depth > 0 {
		at = fmt.Sprintf(" @ d%d", *depth) // llama-bench's name for it
	}
	if *pp > 0 {
		row(fmt.Sprintf("pp%d%s", *pp, at), out.PPTokS, out.PPRuns)
	}
	if *tg > 0 {
		test := fmt.Sprintf("tg%d%s", *tg, at)
		if out.Ahead {
			test += " (ahead)"
		}
		row(test, out.TGTokS, out.TGRuns)
	}
	fmt.Fprintf(stdout, "load %.2f s; %s\n", out.LoadS, out.Layers)
	return nil
}

func fmtRuns(v []float64) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.1f", x)
	}
	return s
}

// serveBench runs `ember bench -streams`/`-prefix`: the serving engine's throughput and
// prefix-cache latency.
func serveBench(ctx context.Context, m *app.Loaded, list []string, o app.ServeBenchOptions, out benchOutput, asJSON bool, stdout io.Writer) error {
	var ns []int
	for _, s := range list {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("-streams: %q is not a positive number", s)
		}
		ns = append(ns, n)
	}
	o.Streams = ns
	r, err := app.ServeBench(ctx, m, o)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			benchOutput
			*app.ServeBenchResult
		}{out, r})
	}
	name := filepath.Base(out.Model)
	if len(r.Streams) > 0 {
		draft, sep := "", ""
		if o.Lookup > 0 {
			draft, sep = " draft tokens (accepted) |", "---|"
		}
		fmt.Fprintf(stdout, "| model | backend | threads | streams | decode tok/s (sum) | per stream |%s\n|---|---|---|---|---|---|%s\n", draft, sep)
		for _, s := range r.Streams {
			fmt.Fprintf(stdout, "| %s | %s %s | %d | %d | %.2f | %.2f |", name, out.Backend, out.ISA, out.Threads, s.Streams, s.TokS, s.PerS)
			if o.Lookup > 0 {
				fmt.Fprintf(stdout, " %d (%d) |", s.DraftTokens, s.DraftAccepted)
			}
			fmt.Fprintln(stdout)
		}
	}
	if r.Prefix > 0 {
		fmt.Fprintf(stdout, "TTFT with a %d-token prefix: cold %.1f ms, cached %.1f ms (%d tokens reused, %.0f%% of cold)\n",
			r.Prefix, r.ColdTTFTms, r.HitTTFTms, r.HitCached, 100*r.HitTTFTms/r.ColdTTFTms)
	}
	if r.Restore > 0 {
		fmt.Fprintf(stdout, "TTFT of the next turn of a %d-token conversation after a restart: cold %.1f ms, from the persistent prefix cache %.1f ms (%d tokens loaded, %.0f%% of cold)\n",
			r.Restore, r.RestoreColdms, r.RestoreLoadedms, r.RestoreCached, 100*r.RestoreLoadedms/r.RestoreColdms)
	}
	return nil
}
