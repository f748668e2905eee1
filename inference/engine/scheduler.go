package engine

import (
	"context"
	"time"

	"ember/inference/model"
	"ember/inference/sample"
	"ember/inference/tokenizer"
)

// scheduler owns the model and the KV cache; only its goroutine touches them.
type scheduler struct {
	m      model.Model
	tok    *tokenizer.Tokenizer
	opt    Options
	cache  *model.Cache
	cached []int32 // tokens whose K and V are in cache rows 0..len-1
	logits []float32
	raw    []float32 // the logits before penalties, kept when logprobs are asked for
}

func (s *scheduler) loop(reqs <-chan *job, quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		case j := <-reqs:
			s.run(j)
		}
	}
}

// send delivers an event unless the client is gone.
func send(j *job, ev Event) bool {
	select {
	case j.events <- ev:
		return true
	case <-j.ctx.Done():
		return false
	}
}

func finish(j *job, ev Event) {
	ev.Done, ev.Token = true, -1
	if ev.Finish == "" {
		ev.Finish = FinishError
	}
	select {
	case j.events <- ev:
	default:
		// A full channel means the reader stopped reading; drop rather than block,
		// but make room for the final event so a reader that comes back sees it.
		select {
		case <-j.events:
		default:
		}
		j.events <- ev
	}
	close(j.events)
}

// prefill evaluates toks at positions start.. in chunks and leaves the last logits row in
// s.logits.
func (s *scheduler) prefill(ctx context.Context, toks []int32, start int) error {
	for off := 0; off < len(toks); off += s.opt.PrefillChunk {
		end := min(off+s.opt.PrefillChunk, len(toks))
		b := model.Batch{Tokens: toks[off:end], Pos: make([]int32, end-off)}
		for i := range b.Pos {
			b.Pos[i] = int32(start + off + i)
		}
		// Keep the cached-token record exact even if this pass fails halfway.
		s.cached = s.cached[:start+off]
		out, err := s.m.Forward(ctx, s.cache, b)
		if err != nil {
			return err
		}
		if end == len(toks) {
			if err := s.m.Backend().ReadF32(ctx, out, s.logits); err != nil {
				return err
			}
		}
		s.cached = append(s.cached, b.Tokens...)
	}
	return nil
}

func (s *scheduler) run(j *job) {
	u := Usage{PromptTokens: len(j.tokens)}
	// Reuse the longest common prefix with what the cache holds, but always evaluate at
	// least the last prompt token to get its logits.
	reuse := 0
	for reuse < len(s.cached) && reuse < len(j.tokens)-1 && s.cached[reuse] == j.tokens[reuse] {
		reuse++
	}
	s.cached = s.cached[:reuse]
	u.CachedTokens = reuse
	if err := s.prefill(j.ctx, j.tokens[reuse:], reuse); err != nil {
		finish(j, eventForErr(j.ctx, err, u))
		return
	}
	u.PromptTime = time.Since(j.start)
	smp := sample.New(j.req.Sampling)
	for _, t := range j.tokens[max(0, len(j.tokens)-64):] {
		smp.Accept(t)
	}
	dec := s.tok.NewDecoder()
	dec.Add(j.tokens[len(j.tokens)-1]) // context: after BOS the first piece's space is dropped
	dec.Flush()
	stop := &stopper{stops: j.req.Stop}
	var first time.Time
	for {
		if j.req.Logprobs {
			s.raw = append(s.raw[:0], s.logits...) // Sample penalizes s.logits in place
		}
		id := smp.Sample(s.logits)
		var lp *Logprob
		if j.req.Logprobs {
			lp = &Logprob{}
			lp.TokenLogprob, lp.Top = sample.Logprobs(s.raw, id, j.req.TopLogprobs)
		}
		if u.CompletionTokens == 0 {
			first = time.Now()
			u.TTFT = first.Sub(j.start)
		}
		u.CompletionTokens++
		u.GenTime = time.Since(first)
		if !j.req.IgnoreEOS && s.tok.IsEOG(id) {
			finish(j, Event{Text: stop.flush() + dec.Flush(), Finish: FinishStop, Usage: u})
			return
		}
		text, hit := stop.push(dec.Add(id))
		if hit {
			finish(j, Event{Text: text, Finish: FinishStop, Usage: u, Logprob: lp})
			return
		}
		if !send(j, Event{Text: text, Token: id, Usage: u, Logprob: lp}) {
			finish(j, Event{Finish: FinishCancelled, Err: j.ctx.Err(), Usage: u})
			return
		}
		pos := len(s.cached)
		if (j.req.MaxTokens > 0 && u.CompletionTokens >= j.req.MaxTokens) || pos >= s.cache.Size {
			tail, _ := stop.push(dec.Flush())
			finish(j, Event{Text: tail + stop.flush(), Finish: FinishLength, Usage: u})
			return
		}
		if err := s.prefill(j.ctx, []int32{id}, pos); err != nil {
			finish(j, eventForErr(j.ctx, err, u))
			return
		}
	}
}

func eventForErr(ctx context.Context, err error, u Usage) Event {
	if ctx.Err() != nil {
		return Event{Finish: FinishCancelled, Err: ctx.Err(), Usage: u}
	}
	return Event{Finish: FinishError, Err: err, Usage: u}
}
