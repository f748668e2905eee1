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
// is worker 0. An op is a number of chunks that the workers claim one at a time; it is
// done when every chunk is done, not when every worker has checked in, so a worker whose
// core is taken by another program delays an op by at most the chunk it holds, and a
// worker that wakes late finds nothing left and goes back to waiting.
//
// Claims go through one word: the op's generation (32 bits), its chunk count (16 bits)
// and the next chunk (16 bits). A claim is a compare-and-swap on that word, so a worker
// can only take a chunk of the op that is running now; the op cannot finish while a
// claimed chunk runs, so its description (work) is stable for the claimant.
type pool struct {
	n     int
	gen   atomic.Uint64 // bumped to publish an op
	claim atomic.Uint64 // gen<<32 | chunks<<16 | next
	done  atomic.Int64  // chunks of the current op finished
	work  func(w, chunk int)

	wake   []chan struct{}
	asleep []atomic.Bool
	quit   atomic.Bool
	exited sync.WaitGroup
	spin   int    // polls before parking (spinIters; tests lower it)
	lag    func() // test hook: runs between publishing an op and waking the workers
}

// maxChunks bounds the chunks of one op (16 bits of the claim word).
const maxChunks = 1<<16 - 1

func newPool(n int) *pool { return newPoolSpin(n, spinIters, nil) }

// newPoolSpin is newPool with the spin count and the lag hook set (for tests).
func newPoolSpin(n, spin int, lag func()) *pool {
	p := &pool{n: n, wake: make([]chan struct{}, n), asleep: make([]atomic.Bool, n), spin: spin, lag: lag}
	for w := 1; w < n; w++ {
		p.wake[w] = make(chan struct{}, 1)
		p.exited.Add(1)
		go p.worker(w, p.gen.Load()) // read here: a run may start before the goroutine does
	}
	return p
}

func (p *pool) worker(w int, seen uint64) {
	defer p.exited.Done()
	for {
		seen = p.await(w, seen)
		if p.quit.Load() {
			return
		}
		p.serve(w, seen)
	}
}

// await returns the first generation after seen: it spins, then parks. A wake-up only
// means "look again" (it may come late, for an op already finished).
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

// serve claims and runs chunks of op g until none is left (or g is over).
func (p *pool) serve(w int, g uint64) {
	for {
		c := p.claim.Load()
		if uint32(c>>32) != uint32(g) {
			return
		}
		chunks, next := int(c>>16&0xffff), int(c&0xffff)
		if next >= chunks {
			return
		}
		if p.claim.CompareAndSwap(c, c+1) {
			p.work(w, next)
			p.done.Add(1)
		}
	}
}

// run calls work(w, c) for every chunk c in [0, chunks), each once, on whichever workers
// claim them (w is the worker's index, for per-worker scratch), and returns when all are
// done. Only one goroutine may call run at a time; chunks must be at most maxChunks.
func (p *pool) run(chunks int, work func(w, chunk int)) {
	if chunks > maxChunks {
		panic("cpu: too many chunks in one op")
	}
	if p.n == 1 || chunks <= 1 {
		for c := range chunks {
			work(0, c)
		}
		return
	}
	g := p.gen.Load() + 1
	p.work = work
	p.done.Store(0)
	p.claim.Store(uint64(uint32(g))<<32 | uint64(chunks)<<16)
	p.gen.Store(g)
	if p.lag != nil {
		p.lag()
	}
	for w := 1; w < p.n; w++ {
		if p.asleep[w].CompareAndSwap(true, false) {
			p.wake[w] <- struct{}{}
		}
	}
	p.serve(0, g)
	for i := 0; p.done.Load() != int64(chunks); i++ {
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
	p.exited.Wait()
}

// chunking splits n items for nw workers into chunks of a multiple of align items:
// about per chunks per worker, each a multiple of round items unless that is all.
func chunking(n, nw, align, per, round int) (size, chunks int) {
	if n <= 0 {
		return max(align, 1), 0
	}
	size = (n + nw*per - 1) / (nw * per)
	size = (size + round - 1) / round * round
	size = max((size+align-1)/align*align, align)
	return size, (n + size - 1) / size
}
