package cuda

/*
#include "launch.h"

// gt_ok reports whether the driver had the event calls (driver.go's em_load).
static int gt_ok(void) { return p_cuEventCreate && p_cuEventRecord && p_cuEventElapsedTime && p_cuEventDestroy; }

static CUresult gt_elapsed(float *ms, CUevent a, CUevent b) { return p_cuEventElapsedTime(ms, a, b); }
// gt_done reports whether the work before e is complete.
static int gt_done(CUcontext ctx, CUevent e) {
	return p_cuEventQuery && !em_ctx_current(ctx) && p_cuEventQuery(e) == 0;
}
*/
import "C"

import (
	"fmt"
	"io"
	"strings"
)

// gpuClock says, with EMBER_CUDA_STATS, how much of the run the device spent on the
// batches and how long it waited for the host between them: an event is recorded on the
// stream before and after each batch's launches, and after each sync the gaps are read.
// A batch's time is from the moment the device reached it (its work before done, and
// the host past the flush) to its last kernel's end, so a batch launched kernel by
// kernel also counts the waits for its own launches. The time between batches is the
// device idle while the host built the next step, read results or launched nothing.
type gpuClock struct {
	loaded, ok bool
	free       []C.CUevent
	marks      []gpuMark
	prev       C.CUevent // the end of the last batch settled
	// ms: in graph replays, in batches launched directly, idle across a sync (from the
	// last batch before it to the first after).
	graphMs, directMs, syncIdleMs float64
	batches                       int
	gaps                          gapHist // the idle gaps between batches (not across syncs)
}

// gapHist counts idle gaps by length, so that a run's idle shows as many short gaps (the
// boundary between steps) or a few long ones (the host late with a step).
type gapHist struct {
	n   [len(gapEdgesUs) + 1]int
	ms  [len(gapEdgesUs) + 1]float64
	max float64 // ms
}

// gapEdgesUs are gapHist's bucket edges in microseconds.
var gapEdgesUs = [...]float64{10, 30, 100, 300, 1000}

// add counts one gap of ms milliseconds.
func (h *gapHist) add(ms float64) {
	i := 0
	for i < len(gapEdgesUs) && ms*1e3 >= gapEdgesUs[i] {
		i++
	}
	h.n[i]++
	h.ms[i] += ms
	h.max = max(h.max, ms)
}

// totalMs is the gaps' milliseconds in all.
func (h *gapHist) totalMs() float64 {
	t := 0.0
	for _, ms := range h.ms {
		t += ms
	}
	return t
}

// String is the buckets with gaps in them: count and milliseconds in all, then the longest.
func (h *gapHist) String() string {
	var b strings.Builder
	for i, n := range h.n {
		if n == 0 {
			continue
		}
		switch i {
		case 0:
			fmt.Fprintf(&b, "<%gus", gapEdgesUs[0])
		case len(gapEdgesUs):
			fmt.Fprintf(&b, ">=%gus", gapEdgesUs[i-1])
		default:
			fmt.Fprintf(&b, "%g-%gus", gapEdgesUs[i-1], gapEdgesUs[i])
		}
		fmt.Fprintf(&b, " %d (%.3f ms); ", n, h.ms[i])
	}
	fmt.Fprintf(&b, "longest %.3f ms", h.max)
	return b.String()
}

type gpuMark struct {
	start, end C.CUevent
	graph      bool
}

// event records a new (or reused) event; nil when events cannot be had.
func (c *gpuClock) event(ctx C.CUcontext) C.CUevent {
	if !c.loaded {
		c.loaded, c.ok = true, C.gt_ok() != 0
	}
	if !c.ok {
		return nil
	}
	var e C.CUevent
	if n := len(c.free); n > 0 {
		e, c.free = c.free[n-1], c.free[:n-1]
	}
	if C.em_event_record(ctx, &e, 0) != 0 { // CU_EVENT_DEFAULT: timed
		c.ok = false
		return nil
	}
	return e
}

// mark keeps the events around one batch.
func (c *gpuClock) mark(start, end C.CUevent, graph bool) {
	if start != nil && end != nil {
		c.marks = append(c.marks, gpuMark{start, end, graph})
	}
}

// settle reads the events of the batches since the last sync (all complete now).
func (c *gpuClock) settle() { c.settleN(len(c.marks)) }

// settleDone reads the events of the batches complete now (after a pending read of a
// step decoded ahead, backend.Feeder, when the host has not synced): the gap before
// the first of them counts as across a sync.
func (c *gpuClock) settleDone(ctx C.CUcontext) {
	n := 0
	for n < len(c.marks) && C.gt_done(ctx, c.marks[n].end) != 0 {
		n++
	}
	c.settleN(n)
}

// settleN reads the events of the first n batches marked.
func (c *gpuClock) settleN(n int) {
	ms := func(a, b C.CUevent) float64 {
		var f C.float
		if C.gt_elapsed(&f, a, b) != 0 {
			return 0
		}
		return float64(f)
	}
	for i, m := range c.marks[:n] {
		d := ms(m.start, m.end)
		if m.graph {
			c.graphMs += d
		} else {
			c.directMs += d
		}
		if c.prev != nil {
			if i == 0 {
				c.syncIdleMs += ms(c.prev, m.start)
			} else {
				c.gaps.add(ms(c.prev, m.start))
			}
			c.free = append(c.free, c.prev)
		}
		c.free = append(c.free, m.start)
		c.prev = m.end
		c.batches++
	}
	c.marks = c.marks[:copy(c.marks, c.marks[n:])]
}

// close frees the events.
func (c *gpuClock) close(ctx C.CUcontext) {
	for _, m := range c.marks {
		c.free = append(c.free, m.start, m.end)
	}
	if c.prev != nil {
		c.free = append(c.free, c.prev)
	}
	for _, e := range c.free {
		C.em_event_free(ctx, e)
	}
	c.free, c.marks, c.prev = nil, nil, nil
}

func (c *gpuClock) report(w io.Writer) {
	if c.batches == 0 {
		return
	}
	fmt.Fprintf(w, "  device (events, %d batches): %.3f s in graph replays, %.3f s in direct batches, idle %.3f s between batches and %.3f s across syncs\n",
		c.batches, c.graphMs/1e3, c.directMs/1e3, c.gaps.totalMs()/1e3, c.syncIdleMs/1e3)
	fmt.Fprintf(w, "  idle gaps between batches: %s\n", &c.gaps)
}
