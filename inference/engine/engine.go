// Package engine is the public face of inference: Generate streams a completion for a
// request. One scheduler goroutine owns the model, its KV cache and all mutable state;
// requests reach it as messages and leave as events on their own channels.
//
// The KV cache is paged (package kvcache): every sequence owns a table of fixed-size
// blocks, full blocks are cached in a radix tree shared by all requests, and the
// scheduler batches every running sequence into each forward pass (continuous batching):
// decode steps and chunks of prompts under a per-step token budget, so a long prompt
// never stalls the streams already running. When blocks run out the most recently
// admitted sequence is preempted and later recomputed (mostly from the prefix cache).
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"ember/inference/backend"
	"ember/inference/jsonprefix"
	"ember/inference/kvcache"
	"ember/inference/model"
	"ember/inference/quant"
	"ember/inference/sample"
	"ember/inference/tokenizer"
)

// ErrContextTooLong is returned when a prompt does not fit in the context.
var ErrContextTooLong = errors.New("engine: prompt is longer than the context")

// ErrNoInfill is returned for a request with a suffix (fill in the middle) when the
// model's vocabulary has no fill-in-the-middle tokens.
var ErrNoInfill = errors.New("engine: the model has no fill-in-the-middle tokens")

// ErrClosed is returned by Generate after Close.
var ErrClosed = errors.New("engine: closed")

// RequestError is Generate's answer to a request it cannot run as given: Field names
// the Request field at fault ("Prompt", "Tokens", "Suffix", "TopLogprobs",
// "LogitBias"), so that an API can name its own parameter in the error.
type RequestError struct {
	Field string
	Msg   string
}

func (e *RequestError) Error() string { return "engine: " + e.Msg }

func badRequest(field, format string, args ...any) error {
	return &RequestError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Options configure an engine.
type Options struct {
	// ContextSize is the number of positions of the KV cache; 0 means the model's
	// training context, capped at 4096.
	ContextSize int
	// PrefillChunk is the token budget of one forward pass: decode tokens of the running
	// sequences plus chunks of prompts; 0 means 512.
	PrefillChunk int
	// Parallel is the most sequences generating at once; 0 means 4.
	Parallel int
	// BlockSize is the positions per KV block; 0 means 16.
	BlockSize int
	// CacheTokens is the size of the KV cache in positions, shared by all sequences and
	// the prefix cache; 0 means ContextSize * min(Parallel, 2). It is at least
	// ContextSize.
	CacheTokens int
	// KVType is the KV cache's type: "f16" (or "", the default) or "q8_0" (half the
	// memory: twice the context or sequences in the same space, on backends that hold
	// one; attention then rounds as llama.cpp's flash attention over a q8_0 cache).
	KVType string
	// Lookup is the most draft tokens a forward pass evaluates, with the next tokens of
	// the decoding sequences that have them (speculative decoding by prompt lookup,
	// lookup.go): the tokens that followed an earlier occurrence of a sequence's last
	// few tokens. The output is unchanged; 0 turns it off.
	Lookup int
	// Blocks, when set, is the persistent prefix cache: full KV blocks of finished
	// sequences are saved there, and prompts are matched against it after the
	// in-memory prefix cache, so a conversation reopened after a restart is not
	// recomputed. Its keys are chain hashes of token blocks; it must hold blocks of
	// this model on this backend only.
	Blocks BlockStore
	// SyncSteps reads every step's sampled ids before the next step is queued. By
	// default, on a backend that allows it (backend.Feeder: CUDA), steps whose rows all
	// decode greedily, draw from their top k alone or from their whole row (at a
	// temperature alone, or by top-p and min-p) are queued a step ahead of the host
	// (ahead.go); the tokens are the same either way. (Whole-row draws are made on such
	// a backend either way.)
	SyncSteps bool

	// checkIntegrity makes the scheduler verify the block pool, its sequences and the
	// prefix tree after every step (tests).
	checkIntegrity bool
	// sampleParallel is the fewest logits rows of a step that are sampled on several
	// goroutines; 0 means parallelRows, < 0 never (tests).
	sampleParallel int
	// lookupAlways drafts every token prompt lookup finds, whatever drafts cost
	// (lookup_cost.go), so that tests do not depend on timing.
	lookupAlways bool
}

// sampleParallelRows is the fewest rows sampled in parallel (Options.sampleParallel).
func (o *Options) sampleParallelRows() int {
	switch {
	case o.sampleParallel < 0:
		return math.MaxInt
	case o.sampleParallel == 0:
		return parallelRows
	}
	return o.sampleParallel
}

// BlockStore keeps KV blocks beyond the process (store.BlockCache). Get reports false
// for a block that is missing, stale or corrupt. Both may be called from any goroutine.
type BlockStore interface {
	Get(hash uint64) ([]byte, bool)
	Put(hash uint64, data []byte) error
}

// Stats is a snapshot of the scheduler, for metrics.
type Stats struct {
	Running, Waiting int
	KVBlocks         int // blocks in the cache
	KVBlocksUsed     int // held by sequences or cached prefixes
	KVBlocksFree     int // free or holding an evictable cached prefix
	KVBlocksCached   int // in the prefix cache (some also used)
	// PrefixHitTokens of PrefixLookupTokens prompt tokens were found in the prefix cache.
	PrefixHitTokens, PrefixLookupTokens int64
	Preemptions                         int64
	// DiskBlocksLoaded and DiskBlocksSaved count blocks moved to and from Blocks.
	DiskBlocksLoaded, DiskBlocksSaved int64
	// DraftTokens of speculative decoding (prompt lookup, predictions) were evaluated;
	// DraftAccepted of them held.
	DraftTokens, DraftAccepted int64
}

// Request is one completion.
type Request struct {
	// Prompt is encoded with the tokenizer (BOS added as the model's file asks) when
	// Tokens is nil. Special-token text in it is recognised when ParseSpecial is set.
	Prompt       string
	ParseSpecial bool
	Tokens       []int32
	// MaxTokens caps generated tokens; 0 means until end of generation or the context.
	MaxTokens int
	Sampling  sample.Params
	// IgnoreEOS keeps generating past end-of-generation tokens (benchmarks).
	IgnoreEOS bool
	// Stop ends generation at the first of these strings; the stream never shows any
	// part of one.
	Stop []string
	// Logprobs asks for each generated token's log-probability, with the TopLogprobs
	// most likely alternatives (0..20).
	Logprobs    bool
	TopLogprobs int
	// LogitBias is added to the logits of its tokens before each draw (OpenAI's
	// logit_bias: -100 all but bans a token, 100 all but forces it).
	LogitBias map[int32]float32
	// JSON constrains the reply to one JSON object (the API's JSON modes): tokens that
	// would make that impossible are never drawn, and the reply ends where the object
	// closes. With ThinkFirst (the prompt opens a reasoning section, DeepSeek-R1's
	// "<think>") the constraint starts after the section's "</think>".
	JSON, ThinkFirst bool
	// JSONSchema, with JSON, is the schema the object must also match (jsonprefix.Compile).
	JSONSchema *jsonprefix.Schema
	// Suffix asks for the text between Prompt and Suffix (fill in the middle: code
	// completion at a cursor), with the model's FIM tokens (ErrNoInfill without them);
	// Prompt and Suffix are then plain text, and Tokens must be nil.
	Suffix string
	// Prediction is text the output is expected to resemble (OpenAI's predicted outputs:
	// a file being edited): its tokens are drafted as prompt lookup drafts the prompt's
	// (lookup.go), whatever Options.Lookup, so that the output is the same, sooner.
	Prediction string
}

// Logprob is one generated token's log-probability and its most likely alternatives.
type Logprob struct {
	sample.TokenLogprob
	Top []sample.TokenLogprob
}

// Finish reasons.
const (
	FinishStop      = "stop"      // an end-of-generation token
	FinishLength    = "length"    // MaxTokens or the context filled up
	FinishCancelled = "cancelled" // ctx was cancelled
	FinishError     = "error"
)

// Usage counts a request's tokens and times.
type Usage struct {
	PromptTokens     int
	CachedTokens     int // prompt tokens whose KV was reused, not recomputed
	CompletionTokens int
	TTFT             time.Duration // request accepted to first token sampled
	PromptTime       time.Duration
	GenTime          time.Duration // first token to last
	// PredictionAccepted of the tokens drafted from Request.Prediction held;
	// PredictionRejected did not.
	PredictionAccepted, PredictionRejected int
}

// Event is one step of a stream. The last event has Done set.
type Event struct {
	Text  string // newly decoded text (complete UTF-8 only)
	Token int32  // the sampled token, -1 on the final event
	// Logprob is the sampled token's, when the request asked for them.
	Logprob *Logprob
	Done    bool
	Finish  string
	Err     error
	Usage   Usage
}

// Engine generates text with one model.
type Engine struct {
	m     model.Model
	tok   *tokenizer.Tokenizer
	opt   Options
	kv    quant.Type  // the KV cache's type
	reqs  chan []*job // Generate's requests, a batch at a time
	quit  chan struct{}
	ended chan struct{}

	mu    sync.Mutex
	stats Stats
}

type job struct {
	ctx        context.Context
	req        Request
	tokens     []int32
	prediction []int32 // Request.Prediction's tokens
	events     chan Event
	start      time.Time
}

// New starts an engine over m, whose KV cache it allocates now.
func New(m model.Model, tok *tokenizer.Tokenizer, opt Options) (*Engine, error) {
	p := m.Params()
	if opt.ContextSize <= 0 {
		opt.ContextSize = min(p.NCtxTrain, 4096)
	}
	if opt.PrefillChunk <= 0 {
		opt.PrefillChunk = 512
	}
	if opt.Parallel <= 0 {
		opt.Parallel = 4
	}
	if opt.BlockSize <= 0 {
		opt.BlockSize = 16
	}
	if opt.CacheTokens <= 0 {
		opt.CacheTokens = opt.ContextSize * min(opt.Parallel, 2)
	}
	opt.CacheTokens = max(opt.CacheTokens, opt.ContextSize)
	bs := opt.BlockSize
	nBlocks := (opt.CacheTokens + bs - 1) / bs
	maxBlocks := (opt.ContextSize + bs - 1) / bs
	kv, err := ParseKVType(opt.KVType)
	if err != nil {
		return nil, err
	}
	cache, err := model.NewPagedCacheOn(model.PlacementOf(m), p, nBlocks, bs, opt.Parallel, maxBlocks, kv)
	if errors.Is(err, backend.ErrUnsupported) {
		return nil, fmt.Errorf("engine: a %s KV cache is not supported on this backend (use f16): %w", opt.KVType, err)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: KV cache of %d positions: %w", nBlocks*bs, err)
	}
	pool, err := kvcache.NewPool(nBlocks, bs)
	if err != nil {
		cache.Free()
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{m: m, tok: tok, opt: opt, kv: kv, reqs: make(chan []*job), quit: make(chan struct{}), ended: make(chan struct{})}
	s := &scheduler{m: m, tok: tok, opt: opt, cache: cache, pool: pool, publish: e.publish}
	if opt.Blocks != nil {
		s.disk = newDiskTier(opt.Blocks)
	}
	go func() {
		defer close(e.ended)
		defer cache.Free()
		defer func() {
			s.disk.close() // the last saves are written
			s.report()
		}()
		s.loop(e.reqs, e.quit)
	}()
	return e, nil
}

func (e *Engine) publish(st Stats) {
	e.mu.Lock()
	e.stats = st
	e.mu.Unlock()
}

// Stats returns the scheduler's state after its last step.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// KVType is the KV cache's type: F16, or Q8_0 (Options.KVType).
func (e *Engine) KVType() quant.Type { return e.kv }

// Options returns the engine's options with the defaults filled in.
func (e *Engine) Options() Options { return e.opt }

// ContextSize is the number of positions a prompt plus its completion may take.
func (e *Engine) ContextSize() int { return e.opt.ContextSize }

// Tokenizer is the model's tokenizer.
func (e *Engine) Tokenizer() *tokenizer.Tokenizer { return e.tok }

// Generate validates req and starts it. Events arrive on the returned channel, which is
// closed after the Done event. Cancelling ctx stops the request at the next step.
func (e *Engine) Generate(ctx context.Context, req Request) (<-chan Event, error) {
	chs, err := e.GenerateBatch(ctx, []Request{req})
	if err != nil {
		return nil, err
	}
	return chs[0], nil
}

// GenerateBatch is Generate for several requests that reach the scheduler together, so
// its next step sees all of them (a request sent alone may start, and even finish,
// before the next arrives). It starts none of them when one is invalid; the error names
// which. Each channel is the request's at the same index.
func (e *Engine) GenerateBatch(ctx context.Context, reqs []Request) ([]<-chan Event, error) {
	js := make([]*job, len(reqs))
	chs := make([]<-chan Event, len(reqs))
	for i, req := range reqs {
		j, err := e.newJob(ctx, req)
		if err != nil {
			if len(reqs) > 1 {
				err = fmt.Errorf("request %d of %d: %w", i, len(reqs), err)
			}
			return nil, err
		}
		js[i], chs[i] = j, j.events
	}
	if len(js) == 0 {
		return nil, nil
	}
	select {
	case e.reqs <- js:
		return chs, nil
	case <-e.quit:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// newJob validates req and makes its job.
func (e *Engine) newJob(ctx context.Context, req Request) (*job, error) {
	toks := req.Tokens
	switch {
	case req.Suffix != "":
		var ok bool
		if toks, ok = e.tok.EncodeInfill(req.Prompt, req.Suffix); !ok {
			return nil, ErrNoInfill
		}
		if req.Tokens != nil {
			return nil, badRequest("Suffix", "a suffix needs a text prompt")
		}
	case toks == nil:
		toks = e.tok.Encode(req.Prompt, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: req.ParseSpecial})
	}
	if len(toks) == 0 {
		return nil, badRequest("Prompt", "empty prompt")
	}
	if len(toks) >= e.opt.ContextSize {
		return nil, fmt.Errorf("%w: %d tokens, context %d", ErrContextTooLong, len(toks), e.opt.ContextSize)
	}
	if req.TopLogprobs < 0 || req.TopLogprobs > 20 {
		return nil, badRequest("TopLogprobs", "top logprobs %d is outside 0..20", req.TopLogprobs)
	}
	nv := int32(e.m.Params().NVocab)
	for _, t := range toks {
		if t < 0 || t >= nv {
			return nil, badRequest("Tokens", "token %d is outside the vocabulary of %d", t, nv)
		}
	}
	for t, b := range req.LogitBias {
		if t < 0 || t >= nv || b != b {
			return nil, badRequest("LogitBias", "logit bias %v of token %d (vocabulary of %d)", b, t, nv)
		}
	}
	// Room for every event the request can produce, so the scheduler never waits on a
	// slow reader (one stream must not stall the others).
	maxGen := e.opt.ContextSize - len(toks)
	if req.MaxTokens > 0 {
		maxGen = min(maxGen, req.MaxTokens)
	}
	j := &job{ctx: ctx, req: req, tokens: toks, events: make(chan Event, maxGen+2), start: time.Now()}
	if req.Prediction != "" {
		j.prediction = e.tok.Encode(req.Prediction, tokenizer.EncodeOptions{})
	}
	return j, nil
}

// Close stops the scheduler, ends the running requests (FinishCancelled, ErrClosed) and
// frees the KV cache.
func (e *Engine) Close() error {
	select {
	case <-e.quit:
	default:
		close(e.quit)
	}
	<-e.ended
	return nil
}

// ParseKVType reads Options.KVType: "" or "f16" is F16, "q8_0" Q8_0.
func ParseKVType(s string) (quant.Type, error) {
	switch strings.ToLower(s) {
	case "", "f16":
		return quant.F16, nil
	case "q8_0":
		return quant.Q8_0, nil
	}
	return 0, fmt.Errorf("engine: KV cache type %q (f16 or q8_0)", s)
}
