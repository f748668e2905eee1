package cuda

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// ProfileEnv names an environment variable: when set (to anything), every launch is
// followed by a synchronize and timed, and Close prints the time per kernel (and grid)
// to stderr. Launch gaps are included, so small kernels read high; it is a guide to where
// the time goes, not a measurement of each kernel.
const ProfileEnv = "EMBER_CUDA_PROFILE"

type profEntry struct {
	calls int
	total time.Duration
}

type profiler struct {
	by    map[string]*profEntry
	start time.Time
}

func newProfiler() *profiler {
	if os.Getenv(ProfileEnv) == "" {
		return nil
	}
	return &profiler{by: map[string]*profEntry{}, start: time.Now()}
}

func (p *profiler) add(key string, d time.Duration) {
	e := p.by[key]
	if e == nil {
		e = &profEntry{}
		p.by[key] = e
	}
	e.calls++
	e.total += d
}

func (p *profiler) report(w io.Writer) {
	keys := make([]string, 0, len(p.by))
	var sum time.Duration
	for k, e := range p.by {
		keys = append(keys, k)
		sum += e.total
	}
	sort.Slice(keys, func(i, j int) bool { return p.by[keys[i]].total > p.by[keys[j]].total })
	fmt.Fprintf(w, "cuda profile: %.3f s in kernels (synchronized), %.3f s since start\n", sum.Seconds(), time.Since(p.start).Seconds())
	for i, k := range keys {
		if i == 40 {
			break
		}
		e := p.by[k]
		fmt.Fprintf(w, "  %8.3f ms %5.1f%% %7d calls %8.1f us/call  %s\n", float64(e.total)/1e6,
			100*float64(e.total)/float64(sum), e.calls, float64(e.total)/1e3/float64(e.calls), k)
	}
}

// StatsEnv names an environment variable: when set, Close prints how the work was
// launched (graph replays, direct batches) and where the host waited.
const StatsEnv = "EMBER_CUDA_STATS"

// SkipEnv names an environment variable holding comma-separated kernel name prefixes
// that are not launched at all: a diagnostic for timing what is left (results are wrong).
// "name$" leaves out that kernel only, "name@N" its launches of N blocks in x (skipped).
const SkipEnv = "EMBER_CUDA_SKIP"

// NoMMQEnv names an environment variable: when set, every MatMul runs the mat-vec
// kernels, whatever the batch, and attention leaves out the tensor-core decode kernels
// (attention_dec.go), so that results do not depend on the batch shape (the tensor-core
// kernels sum in another order). For tests.
const NoMMQEnv = "EMBER_CUDA_NO_MMQ"

type stats struct {
	on                                bool
	flushes, graphRuns, built, direct int
	dags                              int // graphs built with branches (branch.go)
	kernels                           int
	tFlush, tSync, tCopy              time.Duration
	start                             time.Time
	// why counts the flushes by the calls that made them (the first frames outside
	// this package's queue code), so that a batch ending where it should not is found.
	why map[string]int
	// last is the kernels of the last batch of at least minTrace launches (a decode
	// step's graph; with chunked flushes a chunk of it, EMBER_CUDA_CHUNK=0 for whole
	// steps), printed in order so that a layer's launches can be read.
	last []string
	rng  profRange // $EMBER_CUDA_PROFILE_RANGE
	// clock times the device's batches and its idle time between them (gputime.go).
	clock gpuClock
	// ltTuned counts the cuBLASLt plans tuned (lttune.go), ltRetuned those that took
	// another algorithm than the heuristic's first, and ltSavedUs the time that saved on
	// one call of each.
	ltTuned, ltRetuned int
	ltSavedUs          float64
}

// minTrace is the smallest batch whose kernels the stats keep (last).
const minTrace = 64

// note records the caller chain of a flush of n kernels.
func (s *stats) note(n int) {
	if s.why == nil {
		s.why = map[string]int{}
	}
	pc := make([]uintptr, 8)
	k := runtime.Callers(3, pc)
	fr := runtime.CallersFrames(pc[:k])
	var parts []string
	for {
		f, more := fr.Next()
		name := f.Function
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		parts = append(parts, name)
		if len(parts) == 4 || !more {
			break
		}
	}
	size := "<8"
	if n >= minGraphSize {
		size = ">=8"
	}
	s.why[size+" "+strings.Join(parts, " < ")]++
}

// keep records the kernels of a batch of minTrace or more.
func (s *stats) keep(names []string) {
	if len(names) >= minTrace {
		s.last = append(s.last[:0], names...)
	}
}

// report prints the stats; lt is the products run on cuBLASLt, paired those of them in pairs.
func (s *stats) report(w io.Writer, lt, paired int) {
	fmt.Fprintf(w, "cuda stats: %.3f s; %d kernels in %d batches: %d graph replays, %d graphs built (%d with branches), %d batches launched directly; host: %.3f s launching, %.3f s waiting in sync, %.3f s copying\n",
		time.Since(s.start).Seconds(), s.kernels, s.flushes, s.graphRuns, s.built, s.dags, s.direct,
		s.tFlush.Seconds(), s.tSync.Seconds(), s.tCopy.Seconds())
	keys := make([]string, 0, len(s.why))
	for k := range s.why {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return s.why[keys[i]] > s.why[keys[j]] })
	for i, k := range keys {
		if i == 12 {
			break
		}
		fmt.Fprintf(w, "  %7d flushes (batch size, callers): %s\n", s.why[k], k)
	}
	if lt > 0 {
		fmt.Fprintf(w, "  %d products on cuBLASLt, %d of them in pairs\n", lt, paired)
	}
	if s.ltTuned > 0 {
		fmt.Fprintf(w, "  %d cuBLASLt plans tuned, %d to another algorithm (%.1f us saved over one call of each)\n",
			s.ltTuned, s.ltRetuned, s.ltSavedUs)
	}
	s.clock.report(w)
	if len(s.last) > 0 {
		fmt.Fprintf(w, "  the last batch of %d+ kernels, %d: %s\n", minTrace, len(s.last), strings.Join(s.last, " "))
	}
}
