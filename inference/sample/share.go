package sample

import (
	"runtime"
	"sync"
)

// share runs f over [0, n) in as many contiguous parts as there are cores, each at
// least least long (one part, on this goroutine, when n is short): for work whose parts
// are independent, so the result does not depend on how it was split.
func share(n, least int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/max(least, 1))
	if parts <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + parts - 1) / parts
	for lo := 0; lo < n; lo += per {
		wg.Go(func() { f(lo, min(lo+per, n)) })
	}
	wg.Wait()
}
