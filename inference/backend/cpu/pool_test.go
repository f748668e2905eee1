package cpu

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestSpan(t *testing.T) {
	for _, n := range []int{0, 1, 7, 64, 1000, 1001} {
		for _, nw := range []int{1, 2, 3, 8} {
			for _, align := range []int{1, 8} {
				next := 0
				for w := 0; w < nw; w++ {
					lo, hi := span(n, w, nw, align)
					if lo > hi {
						t.Fatalf("n=%d nw=%d: worker %d has [%d,%d)", n, nw, w, lo, hi)
					}
					if hi > lo && lo != next {
						t.Fatalf("n=%d nw=%d align=%d: worker %d starts at %d, want %d", n, nw, align, w, lo, next)
					}
					if hi > lo {
						next = hi
					}
				}
				if next != n {
					t.Fatalf("n=%d nw=%d align=%d: covered %d", n, nw, align, next)
				}
			}
		}
	}
}

// TestPoolRunsEveryWorker checks each run reaches every worker exactly once, also after
// the workers have parked.
func TestPoolRunsEveryWorker(t *testing.T) {
	p := newPool(4)
	defer p.close()
	var hits [4]atomic.Int64
	for round := 0; round < 2000; round++ {
		if round == 1000 {
			time.Sleep(50 * time.Millisecond) // let them park
		}
		p.run(func(w int) { hits[w].Add(1) })
		for w := range hits {
			if got := hits[w].Load(); got != int64(round+1) {
				t.Fatalf("round %d: worker %d ran %d times", round, w, got)
			}
		}
	}
}

// TestPoolLateWake covers a run that publishes an op, is descheduled, and only then wakes
// a worker that has already served that op and parked: the worker must not serve it twice.
func TestPoolLateWake(t *testing.T) {
	for _, spin := range []int{0, 1, 64} {
		lag := func() {
			for range 3 {
				runtime.Gosched()
			}
			time.Sleep(20 * time.Microsecond)
		}
		p := newPoolSpin(3, spin, lag)
		var hits [3]atomic.Int64
		for round := 0; round < 3000; round++ {
			p.run(func(w int) { hits[w].Add(1) })
			for w := range hits {
				if got := hits[w].Load(); got != int64(round+1) {
					p.close()
					t.Fatalf("spin %d round %d: worker %d ran %d times", spin, round, w, got)
				}
			}
		}
		p.close()
	}
}

func TestDecodeOpsDoNotAllocate(t *testing.T) {
	b, err := New(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	x, _ := b.New(0, 1, 4096)
	y, _ := b.New(0, 1, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		b.Add(y, x, y)
		b.SwiGLU(y, x, y)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per decode op", allocs)
	}
}
