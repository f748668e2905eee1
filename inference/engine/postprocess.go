package engine

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// drawing is one sequence's logits row of a step and the token drawn from it.
type drawing struct {
	q   *sequence
	row int // the row in plan order (of s.logits, or s.ids and s.vals)
	id  int32
	lp  *Logprob
}

// parallelRows is the fewest rows a step samples on several goroutines; fewer are not
// worth the goroutines' start.
const parallelRows = 4

// postprocess advances every planned sequence past the tokens just evaluated; those
// whose prompt is now fully in offer its blocks to the prefix cache, and those at the
// end of their tokens sample the next one (streaming it, or finishing). Sampling is
// the argmax ids forward read back, or draws from the top-k candidates it read back, or
// draws from the logits rows (on several
// goroutines when there are many, each sequence with its own sampler, so the tokens are
// those of drawing in turn); the streaming that follows is in plan order.
func (s *scheduler) postprocess(plan []planned) {
	d := s.draws[:0]
	row := 0
	spec := s.spec[:0] // plan entries with drafts and their first rows, verified after the others (lookup.go)
	for _, p := range plan {
		q := p.q
		if len(p.draft) > 0 {
			spec = append(spec, specRows{p, row})
			row += p.n
			continue
		}
		q.computed += p.n
		if q.computed < len(q.tokens) {
			continue // a prompt chunk with more to come
		}
		row++
		if !q.promptCached {
			q.promptCached = true
			if _, _, err := s.pool.Tree().InsertSeq(q.tokens[:q.computed], q.kv); err != nil {
				q.end(Event{Finish: FinishError, Err: fmt.Errorf("engine: prefix cache: %w", err)})
				continue
			}
			if q.u.PromptTime == 0 {
				q.u.PromptTime = time.Since(q.j.start)
			}
		}
		d = append(d, drawing{q: q, row: row - 1})
	}
	s.draws = d
	if !s.argmax && s.topk == 0 && len(d) >= s.opt.sampleParallelRows() {
		s.drawParallel(d)
	} else {
		s.growRaws(1)
		for i := range d {
			d[i].id, d[i].lp = s.drawRow(d[i].q, d[i].row, 0)
		}
	}
	for i := range d {
		d[i].q.emit(d[i].id, d[i].lp, s)
	}
	clear(d) // no sequence kept alive by the reused slice
	for _, x := range spec {
		s.verify(x.p, x.row)
	}
	clear(spec)
	s.spec = spec
}

// specRows is a plan entry with a draft and its first logits row.
type specRows struct {
	p   planned
	row int
}

// drawRow draws q's token from logits row r of the step: its argmax id, or a draw from
// its top-k candidates, or from the whole row (with raw scratch w, grown by the caller).
func (s *scheduler) drawRow(q *sequence, r, w int) (int32, *Logprob) {
	switch {
	case s.argmax:
		id := s.ids[r]
		q.acceptGreedy(id)
		return id, nil
	case s.topk > 0:
		return s.drawTopRow(q, r), nil
	}
	return q.draw(s.logitsRow(r), &s.raws[w])
}

// drawTopRow draws q's token from row r's s.topk candidates in s.ids and s.vals
// (forward checked that each row has one): a greedy row takes the first, the others
// draw with SampleTop, which gives Sample's token on the whole row.
func (s *scheduler) drawTopRow(q *sequence, r int) int32 {
	k := s.topk
	ids, vals := s.ids[r*k:(r+1)*k], s.vals[r*k:(r+1)*k]
	if q.greedy() {
		q.acceptGreedy(ids[0])
		return ids[0]
	}
	id, ok := q.smp.SampleTop(ids, vals)
	if !ok {
		panic(fmt.Sprintf("engine: top-%d row %d has no candidate", k, r))
	}
	return id
}

// logitsRow is logits row r of the step.
func (s *scheduler) logitsRow(r int) []float32 {
	nv := s.m.Params().NVocab
	return s.logits[r*nv : (r+1)*nv]
}

// drawParallel draws the rows of d on up to GOMAXPROCS goroutines (this one included),
// each claiming the next undrawn row and using its own raw scratch.
func (s *scheduler) drawParallel(d []drawing) {
	nw := min(runtime.GOMAXPROCS(0), len(d))
	s.growRaws(nw)
	var next atomic.Int64
	work := func(w int) {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(d) {
				return
			}
			d[i].id, d[i].lp = d[i].q.draw(s.logitsRow(d[i].row), &s.raws[w])
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < nw; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(0)
	wg.Wait()
}

func (s *scheduler) growRaws(n int) {
	for len(s.raws) < n {
		s.raws = append(s.raws, nil)
	}
}
