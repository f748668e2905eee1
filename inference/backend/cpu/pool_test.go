package cpu

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestChunking(t *testing.T) {
	for _, n := range []int{0, 1, 7, 64, 1000, 1001, 100000} {
		for _, nw := range []int{1, 2, 3, 8} {
			for _, align := range []int{1, 8} {
				for _, round := range []int{1, 48} {
					size, chunks := chunking(n, nw, align, 4, round)
					if size%align != 0 || size <= 0 || chunks > maxChunks {
						t.Fatalf("n=%d nw=%d align=%d: size %d, %d chunks", n, nw, align, size, chunks)
					}
					if chunks*size < n || (chunks > 0 && (chunks-1)*size >= n) {
						t.Fatalf("n=%d nw=%d align=%d: %d chunks of %d", n, nw, align, chunks, size)
					}
				}
			}
		}
	}
}

// runCounted runs one op of chunks chunks and checks each ran exactly once, also long
// after run returned (a late worker must not run a chunk again).
func runCounted(t *testing.T, p *pool, hits []atomic.Int64, round, chunks int) {
	t.Helper()
	p.run(chunks, func(w, c int) {
		if w < 0 || w >= p.n {
			t.Errorf("worker %d", w)
		}
		hits[c].Add(1)
	})
	for c := range chunks {
		if got := hits[c].Load(); got != int64(round+1) {
			t.Fatalf("round %d: chunk %d ran %d times", round, c, got)
		}
	}
}

// TestPoolRunsEveryChunk checks each run runs every chunk exactly once, also after the
// workers have parked.
func TestPoolRunsEveryChunk(t *testing.T) {
	p := newPool(4)
	defer p.close()
	hits := make([]atomic.Int64, 13)
	for round := 0; round < 2000; round++ {
		if round == 1000 {
			time.Sleep(50 * time.Millisecond) // let them park
		}
		runCounted(t, p, hits, round, len(hits))
	}
}

// TestPoolLateWake covers a run that publishes an op, is descheduled, and only then wakes
// a worker that has already served that op and parked: the worker must not serve it
// twice, and the next op must not wait for it.
func TestPoolLateWake(t *testing.T) {
	for _, spin := range []int{0, 1, 64} {
		lag := func() {
			for range 3 {
				runtime.Gosched()
			}
			time.Sleep(20 * time.Microsecond)
		}
		p := newPoolSpin(3, spin, lag)
		hits := make([]atomic.Int64, 5)
		for round := 0; round < 3000; round++ {
			runCounted(t, p, hits, round, len(hits))
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
