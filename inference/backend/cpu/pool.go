package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// spinIters is how long an idle worker polls for the next op before it parks: long
// enough to cover the gap between the ops of a decode step (a few microseconds of Go
// code), short enough not to burn a core between requests.
const spinIters = 1 << 17

// pool is a fixed set of worker goroutines, one per thread; the goroutine that calls run
// is worker 0. An op is published by bumping gen; workers spin on it, then park.
type pool struct {
	n       int
	gen     atomic.Uint64
	pending atomic.Int64
	task    func(w int) // the op being run; written before gen is bumped
	wake    []chan struct{}
	asleep  []atomic.Bool
	quit    atomic.Bool
	done    sync.WaitGroup
	spin    int    // polls before parking (spinIters; tests lower it)
	lag     func() // test hook: runs between publishing an op and waking the workers
}

func newPool(n int) *pool { return newPoolSpin(n, spinIters, nil) }

// newPoolSpin is newPool with the spin count and the lag hook set (for tests).
func newPoolSpin(n, spin int, lag func()) *pool {
	p := &pool{n: n, wake: make([]chan struct{}, n), asleep: make([]atomic.Bool, n), spin: spin, lag: lag}
	for w := 1; w < n; w++ {
		p.wake[w] = make(chan struct{}, 1)
		p.done.Add(1)
		go p.worker(w, p.gen.Load()) // read here: a run may start before the goroutine does
	}
	return p
}

func (p *pool) worker(w int, seen uint64) {
	defer p.done.Done()
	for {
		seen = p.await(w, seen)
		if p.quit.Load() {
			return
		}
		p.task(w)
		p.pending.Add(-1)
	}
}

// await returns the first generation after seen: it spins, then parks. A wake-up only
// means "look again": the run that sent it may be late, for a generation this worker has
// already served (it published gen, was descheduled, and claimed the worker after that
// worker had run, spun and parked), so the generation is always re-checked after one.
func (p *pool) await(w int, seen uint64) uint64 {
	for i := 0; ; i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if i < p.spin {
			if i&1023 == 1023 {
				runtime.Gosched()
			}
			continue
		}
		// Park: announce, re-check, then sleep until a run claims us. Whoever turns
		// asleep from true to false owns exactly one token on wake[w].
		p.asleep[w].Store(true)
		if p.gen.Load() == seen {
			<-p.wake[w]
		} else if !p.asleep[w].CompareAndSwap(true, false) {
			<-p.wake[w] // a run claimed us first: take its token
		}
		i = 0
	}
}

// run calls task(w) for every worker w in 0..n-1, in parallel, and returns when all are
// done. Only one goroutine may call run at a time.
func (p *pool) run(task func(w int)) {
	if p.n == 1 {
		task(0)
		return
	}
	p.task = task
	p.pending.Store(int64(p.n - 1))
	p.gen.Add(1)
	if p.lag != nil {
		p.lag()
	}
	for w := 1; w < p.n; w++ {
		if p.asleep[w].CompareAndSwap(true, false) {
			p.wake[w] <- struct{}{}
		}
	}
	task(0)
	for i := 0; ; i++ {
		switch n := p.pending.Load(); {
		case n == 0:
			return
		case n < 0:
			panic("cpu: a pool worker ran an op twice")
		}
		if i&1023 == 1023 {
			runtime.Gosched()
		}
	}
}

// close stops the workers.
func (p *pool) close() {
	if p.n == 1 {
		return
	}
	p.quit.Store(true)
	p.gen.Add(1)
	for w := 1; w < p.n; w++ {
		if p.asleep[w].CompareAndSwap(true, false) {
			p.wake[w] <- struct{}{}
		}
	}
	p.done.Wait()
}

// span splits n items among nw workers in chunks aligned to align and returns worker
// w's half-open range.
func span(n, w, nw, align int) (lo, hi int) {
	chunks := (n + align - 1) / align
	per, extra := chunks/nw, chunks%nw
	start := w*per + min(w, extra)
	cnt := per
	if w < extra {
		cnt++
	}
	lo, hi = start*align, (start+cnt)*align
	return min(lo, n), min(hi, n)
}
