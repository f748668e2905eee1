package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"ember/app"
	"ember/inference/engine"
	"ember/inference/sample"
)

// errUsage reports bad flags; the flag package has already printed why.
var errUsage = errors.New("usage")

// parseFlags parses args with fs, writing errors and -h output to stderr.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %v\n", fs.Args())
		return errUsage
	}
	return nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	modelPath := fs.String("m", "", "model file (GGUF); the bundled model when empty")
	prompt := fs.String("p", "", "prompt text")
	n := fs.Int("n", 128, "most tokens to generate (0: until end of text or the context fills)")
	temp := fs.Float64("temp", 0, "sampling temperature; 0 is greedy")
	topK := fs.Int("top-k", 40, "keep the K most likely tokens (0: all)")
	topP := fs.Float64("top-p", 0.95, "nucleus sampling threshold")
	minP := fs.Float64("min-p", 0.05, "drop tokens below this fraction of the most likely")
	seed := fs.Uint64("seed", 0, "random seed")
	ctxSize := fs.Int("c", 0, "context size (0: the model's, at most 4096)")
	be := fs.String("backend", "auto", "compute backend: auto (CUDA when an NVIDIA GPU is present, else CPU), cpu, cuda or ref")
	threads := fs.Int("t", 0, "CPU threads (0: one per core)")
	ngl := fs.Int("ngl", -1, app.NGLUsage)
	stats := fs.Bool("stats", false, "print token counts and speed to stderr at the end")
	lookup := fs.Int("lookup", 0, "speculative decoding by prompt lookup: at most this many draft tokens a step (0: off)")
	kvType := fs.String("kv-type", "f16", "KV-cache type: f16, or q8_0 (half the memory; CPU backend)")
	jsonMode := fs.Bool("json", false, "sample only a JSON object (the reply ends where it closes)")
	suffix := fs.String("suffix", "", "fill in the middle: the text after the cursor (-p is the text before); the model needs FIM tokens")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *n < 0 || *temp < 0 || *lookup < 0 {
		return errors.New("-n, -temp and -lookup must not be negative")
	}
	bo := app.BackendOptions{Name: *be, Threads: *threads, Stage: terminalStages(stderr)}
	bo.NGL(*ngl)
	m, err := app.OpenModel(*modelPath, bo)
	if err != nil {
		return err
	}
	defer m.Close()
	noteGPU(stderr, m)
	eng, err := engine.New(m.Model, m.Tokenizer, engine.Options{ContextSize: *ctxSize, Lookup: *lookup, KVType: *kvType})
	if err != nil {
		return err
	}
	defer eng.Close()
	events, err := eng.Generate(ctx, engine.Request{
		Prompt:    *prompt,
		Suffix:    *suffix,
		JSON:      *jsonMode,
		MaxTokens: *n,
		Sampling: sample.Params{Temperature: float32(*temp), TopK: *topK, TopP: float32(*topP),
			MinP: float32(*minP), Seed: *seed},
	})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(stdout, *prompt); err != nil {
		return err
	}
	var last engine.Event
	for ev := range events {
		if _, err := io.WriteString(stdout, ev.Text); err != nil {
			return err
		}
		last = ev
	}
	fmt.Fprintln(stdout)
	if last.Err != nil && last.Finish != engine.FinishCancelled {
		return last.Err
	}
	if *stats {
		u := last.Usage
		tps := 0.0
		if u.CompletionTokens > 1 && u.GenTime > 0 {
			tps = float64(u.CompletionTokens-1) / u.GenTime.Seconds()
		}
		fmt.Fprintf(stderr, "prompt %d tokens (%d cached) in %v, %d generated, %.1f tok/s, finish %s\n",
			u.PromptTokens, u.CachedTokens, u.PromptTime.Round(1e6), u.CompletionTokens, tps, last.Finish)
		if st := eng.Stats(); st.DraftTokens > 0 {
			fmt.Fprintf(stderr, "prompt lookup: %d draft tokens, %d accepted\n", st.DraftTokens, st.DraftAccepted)
		}
	}
	return nil
}

// noteGPU says on stderr why m runs on the CPU though a GPU is present (run and bench).
func noteGPU(stderr io.Writer, m *app.Loaded) {
	if m.GPUNote != "" {
		fmt.Fprintf(stderr, "ember: running on the CPU: %s\n", m.GPUNote)
	}
}
