package engine

import (
	"time"

	"ember/inference/kvcache"
	"ember/inference/sample"
	"ember/inference/tokenizer"
)

// sequence is one request's generation: its tokens (prompt, then what was sampled), how
// many of them have their K/V in the cache, its block table, and the sampling and
// streaming state.
type sequence struct {
	j        *job
	tokens   []int32
	computed int          // tokens[:computed] have K/V in the cache
	kv       *kvcache.Seq // nil while waiting
	admitted bool         // admitted at least once (CachedTokens is set)
	// promptCached is set once the prompt's K/V are computed and its full blocks were
	// offered to the prefix cache.
	promptCached bool
	ended        bool

	smp   *sample.Sampler
	dec   *tokenizer.Decoder
	stop  *stopper
	u     Usage
	first time.Time
	ctx   int // the context size: tokens may not exceed it

	// draft is this step's draft tokens (lookup.go), evaluated after its next token;
	// probe says it is a one-token probe of a sequence whose drafts do not pay; fails
	// counts its drafts in a row of which no token held, cool the steps it drafts
	// nothing now; acc is its running acceptance (lookup_cost.go).
	draft       []int32
	probe       bool
	fails, cool int
	acc         float64
	// fromPred says the draft came from the request's prediction; predAt is where in the
	// prediction the output is expected to go on.
	fromPred bool
	predAt   int

	// json follows a JSON reply (Request.JSON; json.go), allowed says which tokens it
	// takes next.
	json    *jsonReply
	allowed func(id int32) bool
}

func newSequence(s *scheduler, j *job) *sequence {
	q := &sequence{j: j, tokens: append([]int32(nil), j.tokens...), ctx: s.opt.ContextSize, acc: accPrior}
	q.u.PromptTokens = len(j.tokens)
	q.smp = sample.New(j.req.Sampling)
	for _, t := range j.tokens[max(0, len(j.tokens)-64):] {
		q.smp.Accept(t)
	}
	q.dec = s.tok.NewDecoder()
	q.dec.Add(j.tokens[len(j.tokens)-1]) // context: after BOS the first piece's space is dropped
	q.dec.Flush()
	q.stop = &stopper{stops: j.req.Stop}
	if j.req.JSON {
		q.json = newJSONReply(s.tok, j.req.ThinkFirst, j.req.JSONSchema)
		q.allowed = q.json.allowed
	}
	return q
}

// greedy reports whether q's next token is the argmax of its logits row and nothing
// else is wanted of the row (no logprobs): the backend may find it (ArgMax), and
// acceptGreedy then stands in for draw.
func (q *sequence) greedy() bool { return q.smp.IsGreedy() && !q.wholeRow() }

// wholeRow reports whether q's draws need its whole logits row on the host: for its
// logprobs, its JSON constraint or its logit bias.
func (q *sequence) wholeRow() bool {
	return q.j.req.Logprobs || q.json != nil || len(q.j.req.LogitBias) > 0
}

// acceptGreedy records id, the argmax of q's logits row, as draw would have (greedy()
// sequences only).
func (q *sequence) acceptGreedy(id int32) { q.smp.Accept(id) }

// draw picks the next token from logits (one row, which the logit bias and penalties
// modify in place) and its logprobs when the request asks (of the biased row); raw is
// scratch for the row before penalties. It touches only q's sampler, so sequences draw
// concurrently with their own raw.
func (q *sequence) draw(logits []float32, raw *[]float32) (int32, *Logprob) {
	req := &q.j.req
	for t, b := range req.LogitBias {
		logits[t] += b
	}
	if req.Logprobs {
		*raw = append((*raw)[:0], logits...) // Sample penalizes logits in place
	}
	var id int32
	if q.json != nil && q.json.active() {
		id = q.smp.SampleMasked(logits, q.allowed)
	} else {
		id = q.smp.Sample(logits)
	}
	var lp *Logprob
	if req.Logprobs {
		lp = &Logprob{}
		lp.TokenLogprob, lp.Top = sample.Logprobs(*raw, id, req.TopLogprobs)
	}
	return id, lp
}

// emit streams the token id just drawn (with its logprobs, or nil) and either appends it
// for the next step or ends the sequence.
func (q *sequence) emit(id int32, lp *Logprob, s *scheduler) {
	req := &q.j.req
	u := &q.u
	if u.CompletionTokens == 0 {
		q.first = time.Now()
		u.TTFT = q.first.Sub(q.j.start)
	}
	u.CompletionTokens++
	u.GenTime = time.Since(q.first)
	if !req.IgnoreEOS && s.tok.IsEOG(id) {
		q.end(Event{Text: q.stop.flush() + q.dec.Flush(), Finish: FinishStop})
		return
	}
	text, hit := q.stop.push(q.dec.Add(id))
	if hit {
		q.end(Event{Text: text, Finish: FinishStop, Logprob: lp})
		return
	}
	q.send(Event{Text: text, Token: id, Logprob: lp})
	switch {
	case q.json != nil && q.json.push(s.tok.Piece(id)): // the object closed: the reply is over
		q.finish(FinishStop)
	case (req.MaxTokens > 0 && u.CompletionTokens >= req.MaxTokens) || len(q.tokens) >= q.ctx:
		q.finish(FinishLength)
	default:
		q.tokens = append(q.tokens, id)
	}
}

// finish ends q for reason after its last token was sent, with the text the decoder and
// the stop-string check still held back.
func (q *sequence) finish(reason string) {
	tail, _ := q.stop.push(q.dec.Flush())
	q.end(Event{Text: tail + q.stop.flush(), Finish: reason})
}

// send delivers an event. The channel has room for every event the request can produce,
// so this never blocks the scheduler.
func (q *sequence) send(ev Event) {
	ev.Usage = q.u
	select {
	case q.j.events <- ev:
	default:
		// Unreachable by construction; dropping beats stalling every other stream.
	}
}

// end sends the final event and closes the stream. Later calls do nothing.
func (q *sequence) end(ev Event) {
	if q.ended {
		return
	}
	q.ended = true
	ev.Done, ev.Token, ev.Usage = true, -1, q.u
	if ev.Finish == "" {
		ev.Finish = FinishError
	}
	select {
	case q.j.events <- ev:
	default:
		// A reader that stopped reading filled the channel: make room for the final event.
		select {
		case <-q.j.events:
		default:
		}
		q.j.events <- ev
	}
	close(q.j.events)
}
