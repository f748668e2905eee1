package app

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"ember/inference/engine"
	"ember/inference/sample"
)

// ServeBenchOptions measure the serving engine: decode throughput summed over several
// concurrent streams, and time to first token with and without a cached prefix.
type ServeBenchOptions struct {
	Streams []int // concurrent stream counts to measure, e.g. 1, 4, 16
	Prompt  int   // prompt tokens per stream (distinct prompts, no shared prefix)
	Gen     int   // tokens generated per stream
	Prefix  int   // shared prefix length for the TTFT test; 0 skips it
	// Restore is the length of a conversation reopened after a restart: TTFT of its
	// next turn cold, and with its blocks loaded from the persistent prefix cache
	// (written to a temporary folder); 0 skips it.
	Restore int
	// Lookup is the streams' engine's speculative decoding by prompt lookup
	// (engine.Options.Lookup).
	Lookup int
	// KVType is the engines' KV cache type (engine.Options.KVType).
	KVType string
	// Warmup runs the streams once untimed before each measurement, on the same engine
	// with other prompts of the same lengths, as llama-bench warms up: the figure is then
	// the engine's steady state, not its first batch's one-time work (a GPU backend's
	// packed weight copies, product plans and the graphs of the steps' shapes). It
	// generates as many tokens as the measurement: with chunked prefill the streams all
	// decode at once only after every prompt is in, and a shorter warmup never ran the
	// full batch's steps (8B at 64 streams of 512 + 128 on the H200: no gain at 16).
	Warmup bool
	// SyncSteps reads each step's ids before queuing the next (engine.Options.SyncSteps).
	SyncSteps bool
	// Sampling is how the streams draw their tokens, each stream with its own seed; the
	// zero Params is greedy.
	Sampling sample.Params
}

// StreamsResult is the decode throughput of n concurrent streams.
type StreamsResult struct {
	Streams int     `json:"streams"`
	TokS    float64 `json:"decode_tok_s"` // summed over the streams, while all of them decode
	PerS    float64 `json:"per_stream_tok_s"`
	// DraftTokens of prompt lookup were evaluated over the whole run, DraftAccepted held.
	DraftTokens   int64 `json:"draft_tokens,omitempty"`
	DraftAccepted int64 `json:"draft_accepted,omitempty"`
	// PrefixHitTokens of the prompts were found in the prefix cache over the whole run
	// (the warmup's included): none, as the prompts share no prefix.
	PrefixHitTokens int64 `json:"prefix_hit_tokens"`
}

// ServeBenchResult is what ServeBench measured.
type ServeBenchResult struct {
	Streams []StreamsResult `json:"streams"`
	Prefix  int             `json:"prefix_tokens,omitempty"`
	// TTFT of a request whose prefix is not cached, and of one sharing the prefix of an
	// earlier request (a prefix-cache hit), in milliseconds.
	ColdTTFTms float64 `json:"cold_ttft_ms,omitempty"`
	HitTTFTms  float64 `json:"hit_ttft_ms,omitempty"`
	HitCached  int     `json:"hit_cached_tokens,omitempty"`
	// The restart test: TTFT of the next turn of a Restore-token conversation, cold and
	// after a restart with its blocks on disk.
	Restore         int     `json:"restore_tokens,omitempty"`
	RestoreColdms   float64 `json:"restore_cold_ttft_ms,omitempty"`
	RestoreLoadedms float64 `json:"restore_loaded_ttft_ms,omitempty"`
	RestoreCached   int     `json:"restore_cached_tokens,omitempty"`
}

// ServeBench runs o on l's model through the engine.
func ServeBench(ctx context.Context, l *Loaded, o ServeBenchOptions) (*ServeBenchResult, error) {
	if o.Prompt < 1 || o.Gen < 2 {
		return nil, fmt.Errorf("bench: streams need a prompt and at least 2 generated tokens")
	}
	res := &ServeBenchResult{}
	nv := l.Model.Params().NVocab
	for _, n := range o.Streams {
		if n < 1 {
			return nil, fmt.Errorf("bench: %d streams", n)
		}
		per := o.Prompt + o.Gen + 1
		eng, err := engine.New(l.Model, l.Tokenizer, engine.Options{ContextSize: per, Parallel: n, CacheTokens: n * (per + 16),
			Lookup: o.Lookup, KVType: o.KVType, SyncSteps: o.SyncSteps})
		if err != nil {
			return nil, err
		}
		var r *StreamsResult
		if o.Warmup {
			_, err = runStreams(ctx, eng, n, o, nv, n) // untimed: no window where all decode is needed
		}
		if err == nil {
			r, err = streams(ctx, eng, n, o, nv, 0)
		}
		st := eng.Stats()
		eng.Close()
		if err != nil {
			return nil, err
		}
		r.DraftTokens, r.DraftAccepted, r.PrefixHitTokens = st.DraftTokens, st.DraftAccepted, st.PrefixHitTokens
		res.Streams = append(res.Streams, *r)
	}
	if o.Prefix > 0 {
		if err := prefixTTFT(ctx, l, o, res); err != nil {
			return nil, err
		}
	}
	if o.Restore > 0 {
		if err := restoreTTFT(ctx, l, o, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// streams starts n requests at once and measures decode tokens per second while all n
// are decoding: from the last stream's first token to the first stream's end.
func streams(ctx context.Context, eng *engine.Engine, n int, o ServeBenchOptions, nv, off int) (*StreamsResult, error) {
	times, err := runStreams(ctx, eng, n, o, nv, off)
	if err != nil {
		return nil, err
	}
	var t0, t1 time.Time
	for i, ts := range times {
		if len(ts) < 2 {
			return nil, fmt.Errorf("bench: stream %d produced %d tokens", i, len(ts))
		}
		if ts[0].After(t0) {
			t0 = ts[0]
		}
		if t1.IsZero() || ts[len(ts)-1].Before(t1) {
			t1 = ts[len(ts)-1]
		}
	}
	count := 0
	for _, ts := range times {
		for _, t := range ts {
			if t.After(t0) && !t.After(t1) {
				count++
			}
		}
	}
	if !t1.After(t0) || count == 0 {
		return nil, fmt.Errorf("bench: the %d streams never all decoded at once", n)
	}
	r := &StreamsResult{Streams: n, TokS: float64(count) / t1.Sub(t0).Seconds()}
	r.PerS = r.TokS / float64(n)
	return r, nil
}

// runStreams starts n requests at once (one batch: the scheduler's next step sees them
// all), reads them to their ends and returns the time each token of each stream
// arrived. Stream i's prompt starts at token off+i of benchTokens' sequence: distinct
// prompts, no shared prefix, and none with the prompts of another call whose offset is
// n or more apart.
func runStreams(ctx context.Context, eng *engine.Engine, n int, o ServeBenchOptions, nv, off int) ([][]time.Time, error) {
	times := make([][]time.Time, n)
	errs := make([]error, n)
	reqs := make([]engine.Request, n)
	for i := range reqs {
		smp := o.Sampling
		smp.Seed = uint64(off + i + 1)
		reqs[i] = engine.Request{Tokens: benchTokens(o.Prompt+off+i, nv)[off+i:], MaxTokens: o.Gen, IgnoreEOS: true, Sampling: smp}
	}
	chs, err := eng.GenerateBatch(ctx, reqs)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for i, ch := range chs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range ch {
				if ev.Err != nil {
					errs[i] = ev.Err
				}
				if !ev.Done || ev.Finish == engine.FinishLength {
					times[i] = append(times[i], time.Now())
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("bench: stream %d: %w", i, err)
		}
	}
	return times, nil
}

// prefixTTFT measures time to first token for a prompt of Prefix+16 tokens, cold, and
// for another prompt sharing its first Prefix tokens right after it.
func prefixTTFT(ctx context.Context, l *Loaded, o ServeBenchOptions, res *ServeBenchResult) error {
	nv := l.Model.Params().NVocab
	eng, err := engine.New(l.Model, l.Tokenizer, engine.Options{ContextSize: o.Prefix + 64, Parallel: 1})
	if err != nil {
		return err
	}
	defer eng.Close()
	first := func(toks []int32) (engine.Usage, error) {
		ch, err := eng.Generate(ctx, engine.Request{Tokens: toks, MaxTokens: 1, IgnoreEOS: true})
		if err != nil {
			return engine.Usage{}, err
		}
		var last engine.Event
		for ev := range ch {
			last = ev
		}
		return last.Usage, last.Err
	}
	// Warm up on unrelated tokens, so neither measurement pays for first use.
	if _, err := first(benchTokens(64, nv)[1:]); err != nil {
		return err
	}
	prefix := benchTokens(o.Prefix+40, nv)[40:]
	cold, err := first(append(append([]int32(nil), prefix...), benchTokens(16, nv)...))
	if err != nil {
		return err
	}
	hit, err := first(append(append([]int32(nil), prefix...), benchTokens(20, nv)[4:]...))
	if err != nil {
		return err
	}
	res.Prefix, res.HitCached = o.Prefix, hit.CachedTokens
	res.ColdTTFTms = float64(cold.TTFT.Microseconds()) / 1000
	res.HitTTFTms = float64(hit.TTFT.Microseconds()) / 1000
	return nil
}

// firstToken runs one request for a single token and returns its usage.
func firstToken(ctx context.Context, eng *engine.Engine, toks []int32) (engine.Usage, error) {
	ch, err := eng.Generate(ctx, engine.Request{Tokens: toks, MaxTokens: 1, IgnoreEOS: true})
	if err != nil {
		return engine.Usage{}, err
	}
	var last engine.Event
	for ev := range ch {
		last = ev
	}
	return last.Usage, last.Err
}

// restoreTTFT: a conversation of Restore tokens is answered (cold, its blocks saved to a
// block cache in a temporary folder), the engine is closed (a restart), and the next
// turn, the conversation plus 16 tokens, is timed on a new engine over the same folder.
func restoreTTFT(ctx context.Context, l *Loaded, o ServeBenchOptions, res *ServeBenchResult) error {
	dir, err := os.MkdirTemp("", "ember-bench-kv")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	nv := l.Model.Params().NVocab
	conv := benchTokens(o.Restore+7, nv)[7:]
	next := append(append([]int32(nil), conv...), benchTokens(16, nv)...)
	run := func(toks []int32) (engine.Usage, error) {
		bc, err := OpenBlockCache(ctx, dir, l, o.KVType, DefaultBlockCacheBytes)
		if err != nil {
			return engine.Usage{}, err
		}
		defer bc.Close()
		eng, err := engine.New(l.Model, l.Tokenizer, engine.Options{ContextSize: o.Restore + 64, Parallel: 1, Blocks: bc, KVType: o.KVType})
		if err != nil {
			return engine.Usage{}, err
		}
		defer eng.Close()                                                        // waits for the blocks to be written
		if _, err := firstToken(ctx, eng, benchTokens(33, nv)[1:]); err != nil { // warm-up
			return engine.Usage{}, err
		}
		return firstToken(ctx, eng, toks)
	}
	cold, err := run(conv)
	if err != nil {
		return err
	}
	loaded, err := run(next)
	if err != nil {
		return err
	}
	res.Restore, res.RestoreCached = o.Restore, loaded.CachedTokens
	res.RestoreColdms = float64(cold.TTFT.Microseconds()) / 1000
	res.RestoreLoadedms = float64(loaded.TTFT.Microseconds()) / 1000
	return nil
}
