package engine

import (
	"fmt"
	"slices"
	"time"

	"ember/inference/kvcache"
	"ember/inference/model"
	"ember/inference/tokenizer"
)

// scheduler owns the model, the KV cache and its block pool; only its goroutine touches
// them. Each step it admits waiting requests, schedules one forward pass over every
// running sequence (decode tokens first, then prompt chunks under the token budget),
// runs it and samples the sequences that reached the end of their tokens.
type scheduler struct {
	m       model.Model
	tok     *tokenizer.Tokenizer
	opt     Options
	cache   *model.Cache
	pool    *kvcache.Pool
	publish func(Stats)
	disk    *diskTier // nil without a BlockStore

	waiting []*sequence // FIFO; preempted sequences go back to the front
	running []*sequence // in admission order

	ahead *aheadStep // a decode step on the device whose ids are not read yet (ahead.go)

	preemptions int64
	// drafted and accepted count the draft tokens evaluated and those that held, cost
	// measures what a draft row costs (lookup.go, lookup_cost.go).
	drafted, accepted int64
	cost              specCost
	// The step's logits rows, in plan order: NVocab floats each in logits; or, when
	// argmax is set (every row greedy and the backend has ArgMax, or the backend drew
	// the rows: drawnOnBackend), only their ids in ids; or, when topk > 0 (every row greedy or top-k sampled, see topKOf, and
	// the backend has TopK), each row's topk first candidates in ids and vals.
	logits []float32
	ids    []int32
	vals   []float32
	argmax bool
	topk   int
	raws   [][]float32 // per sampling goroutine: a row before penalties, for logprobs
	draws  []drawing   // the step's rows to sample, reused
	spec   []specRows  // the step's sequences with drafts, reused
	tables [][]int32   // the batch's block tables, reused
	batch  model.Batch // reused
}

func (s *scheduler) loop(reqs <-chan []*job, quit <-chan struct{}) {
	defer func() {
		s.drainAhead()
		s.abortAll(ErrClosed)
	}()
	for {
		if len(s.running) == 0 && len(s.waiting) == 0 && s.ahead == nil {
			s.report()
			select {
			case <-quit:
				return
			case js := <-reqs:
				s.enqueue(js)
			}
		}
		for drained := false; !drained; {
			select {
			case js := <-reqs:
				s.enqueue(js)
			case <-quit:
				return
			default:
				drained = true
			}
		}
		s.step()
		s.report()
		if s.opt.checkIntegrity {
			if err := s.pool.CheckIntegrity(); err != nil {
				panic(fmt.Sprintf("engine: after a step: %v", err))
			}
		}
	}
}

func (s *scheduler) enqueue(js []*job) {
	for _, j := range js {
		s.waiting = append(s.waiting, newSequence(s, j))
	}
}

// report publishes the scheduler's state.
func (s *scheduler) report() {
	ps := s.pool.Stats()
	st := Stats{
		Running: len(s.running), Waiting: len(s.waiting),
		KVBlocks: ps.Blocks, KVBlocksUsed: ps.Active, KVBlocksFree: ps.Free + ps.Evictable, KVBlocksCached: ps.Cached,
		PrefixHitTokens: ps.HitTokens, PrefixLookupTokens: ps.HitTokens + ps.MissTokens,
		Preemptions: s.preemptions, DraftTokens: s.drafted, DraftAccepted: s.accepted,
	}
	if s.disk != nil {
		st.DiskBlocksLoaded, st.DiskBlocksSaved = s.disk.loaded.Load(), s.disk.saved.Load()
	}
	s.publish(st)
}

// abortAll ends every request with err (the engine is closing).
func (s *scheduler) abortAll(err error) {
	for _, q := range append(s.running, s.waiting...) {
		q.end(Event{Finish: FinishCancelled, Err: err})
	}
	s.running, s.waiting = nil, nil
}

// step runs one forward pass: schedule(); forward(); postprocess(). A step of decode
// rows drawn greedily, from their top k alone or from their whole row (a temperature
// alone, or top-p and min-p), on a backend.Feeder, is queued a step ahead instead
// (ahead.go): its postprocess comes after the next step's forward.
func (s *scheduler) step() {
	s.dropCancelled()
	if s.ahead != nil {
		s.stepAhead()
		return
	}
	s.admit()
	plan := s.schedule()
	if len(plan) == 0 {
		s.stuck()
		return
	}
	if s.goesAhead(plan) {
		ids, err := s.forwardAhead(plan, false)
		if err != nil {
			s.failPlan(plan, err)
			return
		}
		s.ahead = &aheadStep{plan: plan, ids: ids}
		return
	}
	t0, decode := time.Now(), decodeOnly(plan)
	if err := s.forward(plan); err != nil {
		s.failPlan(plan, err)
		return
	}
	s.postprocess(plan)
	if decode {
		s.cost.observe(plan, time.Since(t0))
	}
	s.retire()
}

// failPlan ends every sequence of plan with err, a failed forward pass, and retires
// them.
func (s *scheduler) failPlan(plan []planned, err error) {
	for _, p := range plan {
		p.q.end(Event{Finish: FinishError, Err: fmt.Errorf("engine: forward pass: %w", err)})
	}
	s.retire()
}

// stuck handles a step that could schedule nothing: the newest sequence cannot get a
// block even with every other one preempted (a cache smaller than one context), or
// nothing can start. That sequence fails, so the others go on.
func (s *scheduler) stuck() {
	var q *sequence
	if n := len(s.running); n > 0 {
		q = s.running[n-1]
		s.running = s.running[:n-1]
	} else if len(s.waiting) > 0 {
		q = s.waiting[0]
		s.waiting = s.waiting[1:]
	}
	if q != nil {
		s.release(q)
		q.end(Event{Finish: FinishError, Err: fmt.Errorf("engine: the KV cache cannot hold this sequence: %w", kvcache.ErrOutOfBlocks)})
	}
}

// dropCancelled ends the sequences whose clients went away and frees their blocks now.
func (s *scheduler) dropCancelled() {
	for _, list := range []*[]*sequence{&s.running, &s.waiting} {
		*list = slices.DeleteFunc(*list, func(q *sequence) bool {
			if q.j.ctx.Err() == nil {
				return false
			}
			q.end(Event{Finish: FinishCancelled, Err: q.j.ctx.Err()})
			s.release(q)
			return true
		})
	}
}

// admit starts waiting sequences while there is room. A prompt that shares more than
// the prefix cache holds with a prompt still being computed waits for it, so concurrent
// requests with a common prefix (n choices, one system prompt) compute it once.
func (s *scheduler) admit() {
	for len(s.waiting) > 0 && len(s.running) < s.opt.Parallel {
		q := s.waiting[0]
		if s.behindPrefill(q) {
			return
		}
		blocks, n := s.pool.Tree().Match(q.tokens[:len(q.tokens)-1])
		if !s.room(q, n) {
			for _, b := range blocks {
				_ = s.pool.Free(b)
			}
			return // admitting it now would only preempt someone; retried next step
		}
		blocks, n = s.extendFromDisk(q.tokens[:len(q.tokens)-1], blocks, n)
		kv, err := s.pool.NewSeq(blocks)
		if err != nil {
			for _, b := range blocks {
				_ = s.pool.Free(b)
			}
			return // no room now; retried next step
		}
		s.waiting = s.waiting[1:]
		q.kv, q.computed = kv, n
		if !q.admitted {
			q.u.CachedTokens = n
			q.admitted = true
		}
		s.running = append(s.running, q)
	}
}

// room reports whether q, with n positions found cached, fits beside the running
// sequences: its uncomputed tokens need blocks, and every running sequence keeps one
// block of headroom to grow into. The first sequence is always admitted.
func (s *scheduler) room(q *sequence, n int) bool {
	if len(s.running) == 0 {
		return true
	}
	bs := s.opt.BlockSize
	need := (len(q.tokens)-n+bs-1)/bs + 1
	st := s.pool.Stats()
	return st.Free+st.Evictable >= need+len(s.running)
}

// behindPrefill reports whether q's prompt shares at least one block more than the
// prefix cache holds with a running sequence whose prompt is still being computed.
func (s *scheduler) behindPrefill(q *sequence) bool {
	bs := s.opt.BlockSize
	for _, r := range s.running {
		if r.promptCached {
			continue
		}
		common := 0
		for common < len(q.tokens)-1 && common < len(r.tokens) && q.tokens[common] == r.tokens[common] {
			common++
		}
		if common/bs > r.computed/bs || (common >= bs && r.computed < common) {
			return true
		}
	}
	return false
}

type planned struct {
	q     *sequence
	n     int     // tokens evaluated this step, from q.tokens[q.computed:], then draft's
	draft []int32 // q's draft tokens (lookup.go), each with a logits row
}

// rows is the logits rows p gets: every token's with a draft, else the last one's when
// it ends q's tokens (a prompt chunk with more to come has none).
func (p planned) rows() int {
	switch {
	case len(p.draft) > 0:
		return p.n
	case p.q.computed+p.n == len(p.q.tokens):
		return 1
	}
	return 0
}

// token is the k-th token p evaluates.
func (p planned) token(k int) int32 {
	if d := k - (len(p.q.tokens) - p.q.computed); d >= 0 {
		return p.draft[d]
	}
	return p.q.tokens[p.q.computed+k]
}

// schedule picks the tokens of this step: one for every decoding sequence (with its
// draft tokens, while the budget lasts), then prompt chunks in admission order under the
// budget. Blocks are taken for them now; when they run out, drafts are dropped, then the
// most recently admitted sequences are preempted (recomputed later).
func (s *scheduler) schedule() []planned {
	budget := s.opt.PrefillChunk
	decoding := 0
	for _, q := range s.running {
		if len(q.tokens)-q.computed == 1 {
			decoding++
		}
	}
	// Draft tokens: at most Lookup a step in all (a batch of several sequences already
	// shares each weight read; on the CPU each more row costs compute), within the budget.
	draftCap := s.opt.Lookup
	for _, q := range s.running {
		if len(q.j.prediction) > 0 {
			draftCap = max(draftCap, predictionLookup)
		}
	}
	room := min(budget-decoding, draftCap)
	if s.cost.calibrating() && !s.opt.lookupAlways {
		room = 0 // a step without drafts: the base time drafts are measured against
	}
	for _, q := range s.running {
		s.draftFor(q, max(room, 0))
		room -= len(q.draft)
		decoding += len(q.draft)
	}
	prefill := max(budget-decoding, 1)
	var plan []planned
	for i := 0; i < len(s.running); i++ {
		q := s.running[i]
		n := len(q.tokens) - q.computed
		if n > 1 {
			if prefill <= 0 {
				continue
			}
			n = min(n, prefill)
		}
		n += len(q.draft)
		for q.kv.Append(n) != nil {
			if len(q.draft) > 0 { // no room for the draft: decode without it
				n -= len(q.draft)
				q.draft = q.draft[:0]
				continue
			}
			// Out of blocks: preempt the newest sequence not yet planned.
			if i == len(s.running)-1 {
				if len(plan) == 0 && len(s.running) == 1 {
					// Alone and still no room: shrink the chunk.
					if n > 1 {
						n = max(n/2, 1)
						continue
					}
				}
				return plan
			}
			s.preempt(len(s.running) - 1)
		}
		if len(q.tokens)-q.computed > 1 || (n > 1 && len(q.draft) == 0) {
			prefill -= n
		}
		plan = append(plan, planned{q, n, q.draft})
	}
	return plan
}

// preempt moves running sequence i back to the front of the queue, releasing its blocks
// (its full blocks stay in the prefix cache until evicted, so recomputing is cheap when
// memory frees up soon).
func (s *scheduler) preempt(i int) {
	q := s.running[i]
	s.running = slices.Delete(s.running, i, i+1)
	s.release(q)
	s.waiting = slices.Insert(s.waiting, 0, q)
	s.preemptions++
}

// release caches q's computed full blocks and drops its block table.
func (s *scheduler) release(q *sequence) {
	if q.kv == nil {
		return
	}
	if q.computed > 0 && q.computed <= q.kv.Len() {
		_, _, _ = s.pool.Tree().InsertSeq(q.tokens[:q.computed], q.kv)
	}
	q.kv.Release()
	q.kv, q.computed = nil, 0
}

// build makes the batch of a plan.
func (s *scheduler) build(plan []planned) *model.Batch {
	b := &s.batch
	if b.Logits == nil {
		b.Logits = make([]int32, 0, s.opt.Parallel) // non-nil: no logits for a prompt chunk
	}
	b.Tokens, b.Pos, b.Seq, b.Logits, b.Fed = b.Tokens[:0], b.Pos[:0], b.Seq[:0], b.Logits[:0], false
	for len(s.tables) < len(plan) {
		s.tables = append(s.tables, nil)
	}
	b.Tables = s.tables[:len(plan)]
	for i, p := range plan {
		q := p.q
		for k := 0; k < p.n; k++ {
			b.Tokens = append(b.Tokens, p.token(k))
			b.Pos = append(b.Pos, int32(q.computed+k))
			b.Seq = append(b.Seq, int32(i))
		}
		for r := p.rows(); r > 0; r-- {
			b.Logits = append(b.Logits, int32(len(b.Tokens)-r))
		}
		t := b.Tables[i][:0]
		for _, blk := range q.kv.Blocks() {
			t = append(t, int32(blk))
		}
		b.Tables[i] = t
	}
	return b
}

// retire removes finished sequences and releases their blocks.
func (s *scheduler) retire() {
	s.running = slices.DeleteFunc(s.running, func(q *sequence) bool {
		if !q.ended {
			return false
		}
		s.saveToDisk(q)
		s.release(q)
		return true
	})
}
