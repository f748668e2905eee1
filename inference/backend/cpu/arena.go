package cpu

import (
	"sync"
	"unsafe"
)

// arena holds weight copies in memory the kernel can back with 2 MiB pages. Decode
// streams every weight once per token; from a file mapping (4 KiB page-cache pages) each
// page costs a TLB walk and stops the hardware prefetcher at its boundary, and measured
// here that costs 8-19% of decode speed. Weights are bump-allocated, 64-byte aligned,
// from one large reservation made with MAP_NORESERVE (only touched pages use memory);
// freeing a weight returns its whole pages to the system. The copies stop at a budget of
// three quarters of the memory available when the backend starts: past it weights stay
// in the mapping, which the kernel can page out, so a model larger than memory still
// loads (slower) instead of exhausting it.
type arena struct {
	mem    []byte // the reservation; nil when weights stay in the file mapping
	used   int    // bytes handed out (the next offset)
	live   int    // bytes of weights not freed
	budget int    // the most live bytes
}

// arenaMin is the smallest weight copied into the arena: norm vectors and biases are
// read once per layer and stay where they are.
const arenaMin = 64 << 10

// alloc returns n bytes of the arena, or nil when it has no room or does not exist.
func (a *arena) alloc(n int) []byte {
	if a.mem == nil || n < arenaMin {
		return nil
	}
	at := (a.used + 63) &^ 63
	if at+n > len(a.mem) || a.live+n > a.budget {
		return nil
	}
	a.used, a.live = at+n, a.live+n
	return a.mem[at : at+n : at+n]
}

// owns reports whether b lies in the arena.
func (a *arena) owns(b []byte) bool {
	if a.mem == nil || len(b) == 0 {
		return false
	}
	p, lo := addr(b), addr(a.mem)
	return p >= lo && p < lo+uintptr(len(a.mem))
}

// parallelCopy copies src into dst (of the same length) on up to n goroutines, in 2 MiB
// pieces. First touches of fresh pages dominate a copy into the arena, and they scale
// with the cores: measured here, one thread copies 1 GB in 3 s and two in 1 s.
func parallelCopy(dst, src []byte, n int) {
	const piece = 2 << 20
	if n <= 1 || len(src) < 2*piece {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	for w := range n {
		lo, hi := len(src)*w/n&^(piece-1), len(src)*(w+1)/n&^(piece-1)
		if w == n-1 {
			hi = len(src)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[lo:hi], src[lo:hi])
		}()
	}
	wg.Wait()
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
