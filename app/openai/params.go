package openai

import (
	"math"
	"math/rand/v2"
	"strconv"

	"ember/inference/engine"
	"ember/inference/sample"
)

// Limits of the request parameters.
const (
	maxN       = 8 // completions per request
	maxStops   = 4 // as OpenAI
	maxStopLen = 256
	maxPrompts = 16 // prompts of one /v1/completions request
	maxTopK    = 1 << 20
	// maxLogitBias is the most tokens a logit_bias may name (OpenAI's limit is 300).
	maxLogitBias = 1024
	maxTokensHi  = math.MaxInt32
)

// genParams are a request's validated generation parameters.
type genParams struct {
	base         engine.Request // everything but the prompt and the seed
	n            int
	seed         uint64 // choice i samples with seed+i
	stream       bool
	includeUsage bool
}

// params validates the fields both endpoints share. maxTokens is max_tokens, or
// max_completion_tokens when given (chat).
func (c *common) params(maxTokens *int64, maxTokensParam string) (genParams, *apiError) {
	p := genParams{n: 1, stream: c.Stream}
	if c.StreamOptions != nil && c.Stream {
		p.includeUsage = c.StreamOptions.IncludeUsage
	}
	if c.N != nil {
		if *c.N < 1 || *c.N > maxN {
			return p, invalid("n", "Invalid 'n': %d is outside 1..%d.", *c.N, maxN).withCode("invalid_value")
		}
		p.n = int(*c.N)
	}
	if maxTokens != nil {
		if *maxTokens < 1 || *maxTokens > maxTokensHi {
			return p, invalid(maxTokensParam, "Invalid '%s': %d is outside 1..%d.", maxTokensParam, *maxTokens, maxTokensHi).withCode("invalid_value")
		}
		p.base.MaxTokens = int(*maxTokens)
	}
	sp := sample.Params{Temperature: 1, TopP: 1}
	type rng struct {
		name   string
		v      *float64
		lo, hi float64
		dst    *float32
	}
	for _, f := range []rng{
		{"temperature", c.Temperature, 0, 2, &sp.Temperature},
		{"top_p", c.TopP, 0, 1, &sp.TopP},
		{"min_p", c.MinP, 0, 1, &sp.MinP},
		{"presence_penalty", c.PresencePenalty, -2, 2, &sp.Penalties.Presence},
		{"frequency_penalty", c.FrequencyPenalty, -2, 2, &sp.Penalties.Frequency},
		{"repeat_penalty", c.RepeatPenalty, 0, 10, &sp.Penalties.Repeat},
	} {
		if f.v == nil {
			continue
		}
		if math.IsNaN(*f.v) || *f.v < f.lo || *f.v > f.hi {
			return p, invalid(f.name, "Invalid '%s': %v is outside %v..%v.", f.name, *f.v, f.lo, f.hi).withCode("invalid_value")
		}
		*f.dst = float32(*f.v)
	}
	if len(c.LogitBias) > maxLogitBias {
		return p, invalid("logit_bias", "Invalid 'logit_bias': %d tokens, at most %d.", len(c.LogitBias), maxLogitBias).withCode("invalid_value")
	}
	for k, v := range c.LogitBias {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return p, invalid("logit_bias", "Invalid 'logit_bias': key %q is not a token id.", k).withCode("invalid_value")
		}
		if math.IsNaN(v) || v < -100 || v > 100 {
			return p, invalid("logit_bias", "Invalid 'logit_bias': the bias %v of token %d is outside -100..100.", v, id).withCode("invalid_value")
		}
		if p.base.LogitBias == nil {
			p.base.LogitBias = make(map[int32]float32, len(c.LogitBias))
		}
		p.base.LogitBias[int32(id)] = float32(v)
	}
	if c.TopK != nil {
		if *c.TopK < 0 || *c.TopK > maxTopK {
			return p, invalid("top_k", "Invalid 'top_k': %d is outside 0..%d.", *c.TopK, maxTopK).withCode("invalid_value")
		}
		sp.TopK = int(*c.TopK)
	}
	if c.TopP != nil && *c.TopP == 0 {
		// OpenAI's top_p 0 keeps the smallest set of tokens whose probability reaches
		// 0: the most likely token alone. The sampler reads TopP 0 as "keep all", so
		// say it with top-k.
		sp.TopP, sp.TopK = 1, 1
	}
	if sp.Penalties.Presence != 0 || sp.Penalties.Frequency != 0 {
		sp.Penalties.LastN = -1 // OpenAI's penalties count the whole text so far
	}
	p.base.Sampling = sp
	if len(c.Stop) > maxStops {
		return p, invalid("stop", "Invalid 'stop': at most %d stop sequences, got %d.", maxStops, len(c.Stop)).withCode("invalid_value")
	}
	for _, s := range c.Stop {
		if len(s) > maxStopLen {
			return p, invalid("stop", "Invalid 'stop': a stop sequence is longer than %d bytes.", maxStopLen).withCode("invalid_value")
		}
		if s != "" {
			p.base.Stop = append(p.base.Stop, s)
		}
	}
	if c.Seed != nil {
		p.seed = uint64(*c.Seed)
	} else {
		p.seed = rand.Uint64()
	}
	return p, nil
}

// request is the engine request of choice i.
func (p *genParams) request(i int) engine.Request {
	r := p.base
	r.Sampling.Seed = p.seed + uint64(i)
	r.Stop = append([]string(nil), p.base.Stop...)
	return r
}
