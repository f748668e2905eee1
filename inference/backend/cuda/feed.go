package cuda

/*
#include "launch.h"

// fd_ok reports whether the driver had the event calls a pending read needs.
static int fd_ok(void) {
	return p_cuEventCreate && p_cuEventRecord && p_cuEventSynchronize && p_cuEventDestroy;
}
static CUresult fd_wait(CUcontext ctx, CUevent e) {
	CUresult r = em_ctx_current(ctx);
	return r ? r : p_cuEventSynchronize(e);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

var _ backend.Feeder = (*Backend)(nil)

// feed is backend.Feeder's state. argmax_f32 (or sample_top_f32) writes a step's ids into
// dev, where the next step's embedding reads them (Fed), and a copy of them goes to one
// of MaxPending slots of pinned host memory, after which an event is recorded: Wait waits
// for that event alone, so the host reads step N's ids while step N+1 runs. dev's address
// stays put while the rows fit, so a decode step's launches stay equal and replay as a
// graph.
type feed struct {
	dev   scratch        // device ids
	cand  scratch        // SampleAhead's candidates
	cand1 scratch        // their first pass's (topkTo)
	draws scratch        // SampleAhead's draws (drawWords a row)
	pmax  scratch        // Row and nucleus draws: each part's largest logit (rowTo)
	tree  scratch        // Row and nucleus draws: each part's sums
	order scratch        // nucleus draws: their candidates' columns in order
	seen  scratch        // the draws' penalized tokens
	ids   []int32        // the same on the host
	words []uint64       // the draws on the host
	host  unsafe.Pointer // pinned: MaxPending slots of size ids each
	size  int            // ids a slot holds
	slots [backend.MaxPending]feedSlot
	next  int // the slot the next ArgMaxAhead takes
	rows  int // rows of the last ArgMaxAhead
	gen   uint64
}

type feedSlot struct {
	ev   C.CUevent
	busy bool   // holds ids not yet waited for
	gen  uint64 // the ArgMaxAhead that holds it
}

// pending is one ArgMaxAhead's ids.
type pending struct {
	b    *Backend
	slot int
	gen  uint64
	rows int
}

// feedMinIDs is the fewest ids a slot holds (the engine's decode batches are at most its
// parallel sequences).
const feedMinIDs = 256

// ArgMaxAhead implements backend.Feeder.
func (b *Backend) ArgMaxAhead(ctx context.Context, src backend.Tensor) (backend.Pending, error) {
	t := want(src, quant.F32)
	return b.ahead(ctx, "ArgMaxAhead", t, func(out uint64) { b.argmaxTo(out, t) })
}

// SampleAhead implements backend.Feeder: topk_f32 writes each row's candidates into a
// scratch (kmax a row, the most any draw takes, MaxTopK with a nucleus draw), and
// sample_top_f32 draws from them into the feed; rows drawn whole or by their nucleus
// take rowTo's kernels too. The draws go to the device by a queued copy ahead of the
// step's kernels.
func (b *Backend) SampleAhead(ctx context.Context, src backend.Tensor, draws []sample.Draw) (backend.Pending, error) {
	t := want(src, quant.F32)
	kmax, err := backend.CheckDraws("cuda", t.rows, draws)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(draws, func(d sample.Draw) bool { return d.Nucleus }) {
		kmax = backend.MaxTopK // the nucleus draws' first round of candidates
	}
	if t.cols > rowMaxCols && slices.ContainsFunc(draws, func(d sample.Draw) bool { return d.Row || d.Nucleus }) {
		return nil, fmt.Errorf("cuda: SampleAhead: a row draw over %d logits, more than %d", t.cols, rowMaxCols)
	}
	return b.ahead(ctx, "SampleAhead", t, func(out uint64) { b.sampleTo(out, t, draws, kmax) })
}

// ahead is ArgMaxAhead and SampleAhead: pick queues the kernels that write t's rows' ids
// at out (the feed); then the ids' copy to the next free slot and its event.
func (b *Backend) ahead(ctx context.Context, op string, t *tensor, pick func(out uint64)) (backend.Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := &b.fd
	if C.fd_ok() == 0 {
		return nil, fmt.Errorf("cuda: %s: the driver has no event calls", op)
	}
	s := f.next
	if f.slots[s].busy {
		return nil, fmt.Errorf("cuda: %s with %d results not yet waited for", op, backend.MaxPending)
	}
	if err := b.feedRoom(t.rows); err != nil {
		return nil, err
	}
	out := b.scratchFor(&f.dev, 4*f.size)
	if out != 0 && b.err == nil {
		pick(out)
	}
	if out == 0 || b.err != nil {
		if err := b.Sync(ctx); err != nil {
			return nil, err // the failure recorded
		}
		return nil, fmt.Errorf("cuda: %s: no device memory for the ids", op)
	}
	b.flush()
	b.fail(b.h.dtohAsync(f.slot(s), out, 4*t.rows))
	if r := C.em_event_record(b.h.ctx, &f.slots[s].ev, 2); r != 0 { // CU_EVENT_DISABLE_TIMING
		b.fail(cuErr("cuEventRecord", "", r))
	}
	if b.err != nil {
		return nil, b.err
	}
	f.gen++
	f.slots[s] = feedSlot{ev: f.slots[s].ev, busy: true, gen: f.gen}
	f.next = (s + 1) % backend.MaxPending
	f.rows = t.rows
	return &pending{b: b, slot: s, gen: f.gen, rows: t.rows}, nil
}

// drawWords is a draw's size on the device in 8-byte words (kernels/cuda/sample.cuh,
// DRAW_WORDS): K, then Temp, TopP, MinP and U as doubles, then the penalties: repeat
// and presence, frequency and flags, the seen tokens' offset and count.
const drawWords = 8

// drawThreads is sample_top_f32's block size (DRAW_THREADS), penThreads
// sample_penalize_f32's (PEN_THREADS).
const (
	drawThreads = 256
	penThreads  = 256
)

// sampleTo queues SampleAhead's kernels for t's rows, their ids at out. The candidates
// and the draws have scratches of their own, which only grow, so a step's launches stay
// equal and replay as a graph. The draws' copy skips the flush of the kernels queued
// before it: no kernel queued since the last flush reads the draws' buffer, and the
// ones flushed before (the last step's draw) come before the copy on the stream.
func (b *Backend) sampleTo(out uint64, t *tensor, draws []sample.Draw, kmax int) {
	f := &b.fd
	n := t.rows * kmax
	cand := b.scratchFor(&f.cand, 8*n) // ids, then as many values
	dev := b.scratchFor(&f.draws, 8*drawWords*t.rows)
	if cand == 0 || dev == 0 {
		return // the failure is recorded
	}
	f.words, f.ids = f.words[:0], f.ids[:0]
	whole, nucleus, penalized := 0, 0, false
	for _, d := range draws {
		k := uint64(d.K)
		switch {
		case d.Row:
			k, whole = math.MaxUint64, whole+1 // K -1: sample_row.cu's row_draw
		case d.Nucleus:
			k, nucleus = math.MaxUint64-1, nucleus+1 // K -2: sample_nucleus_f32's
		}
		var flags uint64
		if d.Pen.Active() {
			flags, penalized = 1, true
			if d.SeenFed {
				flags |= 2
			}
		}
		f.words = append(f.words, k, math.Float64bits(d.Temp), math.Float64bits(d.TopP),
			math.Float64bits(d.MinP), math.Float64bits(d.U),
			uint64(math.Float32bits(d.Pen.Repeat))|uint64(math.Float32bits(d.Pen.Presence))<<32,
			uint64(math.Float32bits(d.Pen.Frequency))|flags<<32,
			uint64(len(f.ids))|uint64(len(d.Seen))<<32)
		f.ids = append(f.ids, d.Seen...)
	}
	b.stageWrite(dev, unsafe.Pointer(&f.words[0]), 8*len(f.words), false)
	if penalized {
		// Each row's penalties first (src changed in place); the fed ids they count are
		// still out's (the step before's), which the kernels below then overwrite.
		seen := b.scratchFor(&f.seen, 4*max(len(f.ids), 1))
		if seen == 0 {
			return // the failure is recorded
		}
		if len(f.ids) > 0 {
			b.stageWrite(seen, unsafe.Pointer(&f.ids[0]), 4*len(f.ids), false)
		}
		b.launch("sample_penalize_f32", t.rows, 1, penThreads, 0, ptr(t), i64(t.stride/4), i64(t.cols), dev, seen, out)
	}
	if whole < len(draws) {
		b.topkTo(cand, cand+uint64(4*n), t, kmax, &f.cand1)
		b.launch("sample_top_f32", t.rows, 1, drawThreads, 0, out, cand, cand+uint64(4*n), i64(kmax), dev, ptr(t),
			i64(t.stride/4), i64(t.cols))
	}
	if whole > 0 || nucleus > 0 {
		// After sample_top_f32, which wrote those rows' ids too; the nucleus draws take
		// topk_f32's candidates as their first round.
		b.rowTo(out, t, dev, whole > 0, nucleus > 0, cand, kmax)
	}
}

// Row draws' shape (kernels/cuda/sample_row.cu): parts of rowPart logits, each a subtree of
// rowNodes sums, at most rowMaxParts a row.
const (
	rowPart     = 2048
	rowNodes    = 128
	rowMaxParts = 1024
	rowMaxCols  = rowPart * rowMaxParts
	rowThreads  = 256
	nucThreads  = 1024   // sample_nucleus_f32's block (NUC_THREADS)
	nucSmem     = 225280 // and its dynamic shared memory (NUC_SMEM)
	nucRoundMax = 8192   // and the most candidates in a round past the first (NUC_ROUND)
	// nucCompatRound and nucCompatSmem are NUC_ROUND and NUC_SMEM of the compatibility
	// PTX (sample_row.cu without EM_SM90), whose block fits an RTX 40's 99 KiB.
	nucCompatRound = 2048
	nucCompatSmem  = 69632
	nucFirst       = 2048 // the candidates of the round after topk_f32's (each later one 4x, to nucRoundMax)
)

// NucRoundEnv and NucFirstEnv name environment variables: the most candidates a
// nucleus draw's rounds past the first take, and the candidates of the first of them
// (powers of two from 256 to nucRoundMax), for timing other rounds.
const (
	NucRoundEnv = "EMBER_CUDA_NUC_ROUND"
	NucFirstEnv = "EMBER_CUDA_NUC_FIRST"
)

// nucRoundFromEnv is $name, or def when unset or not such a power of two.
func nucRoundFromEnv(name string, def int) int {
	if n := decIntEnv(name); n >= 256 && n <= nucRoundMax && n&(n-1) == 0 {
		return n
	}
	return def
}

// rowTo queues the kernels that draw the rows of t whose draws (at dev) are Row draws
// (whole) or Nucleus draws (nucleus), their ids at out: each part's largest logit, each
// part's sums, then the draws, the nucleus ones from their first kmax candidates at cand
// (topk_f32's ids, then its values).
func (b *Backend) rowTo(out uint64, t *tensor, dev uint64, whole, nucleus bool, cand uint64, kmax int) {
	f := &b.fd
	parts := (t.cols + rowPart - 1) / rowPart
	pmax := b.scratchFor(&f.pmax, 4*t.rows*parts)
	tree := b.scratchFor(&f.tree, 8*rowNodes*t.rows*parts)
	if pmax == 0 || tree == 0 {
		return // the failure is recorded
	}
	x, stride, cols := ptr(t), i64(t.stride/4), i64(t.cols)
	b.launch("sample_row_max", t.rows, parts, rowThreads, 0, pmax, dev, x, stride, cols)
	b.launch("sample_row_sum", t.rows, parts, rowThreads, 0, tree, pmax, dev, x, stride, cols)
	if whole {
		b.launch("sample_row_draw", t.rows, 1, rowThreads, 0, out, tree, pmax, dev, x, stride, cols, i64(parts))
	}
	if nucleus {
		order := b.scratchFor(&f.order, 4*t.rows*t.cols)
		if order == 0 {
			return // the failure is recorded
		}
		n := uint64(4 * t.rows * kmax)
		b.launch("sample_nucleus_f32", t.rows, 1, nucThreads, b.nucSmem(), out, cand, cand+n, i64(kmax), tree, pmax, dev, x,
			stride, cols, i64(parts), order, i64(min(b.nucFirst, b.nucRound)), i64(b.nucRound))
	}
}

// feedRoom makes the slots and the device ids hold rows ids. Growing the pinned slots
// waits for the device first, and is refused while a slot holds ids not yet read.
func (b *Backend) feedRoom(rows int) error {
	f := &b.fd
	if rows <= f.size {
		return nil
	}
	for _, sl := range f.slots {
		if sl.busy {
			return fmt.Errorf("cuda: ArgMaxAhead of %d rows while results of at most %d wait", rows, f.size)
		}
	}
	size := feedMinIDs
	for size < rows {
		size *= 2
	}
	if f.host != nil {
		if err := b.Sync(context.Background()); err != nil {
			return err
		}
		if err := b.h.hostFree(f.host); err != nil {
			return err
		}
		f.host, f.size = nil, 0
	}
	p, err := b.h.hostAlloc(4 * size * backend.MaxPending)
	if err != nil {
		return fmt.Errorf("cuda: ArgMaxAhead's pinned ids: %w", err)
	}
	f.host, f.size = p, size
	return nil
}

// waiting reports whether a step's ids are on their way (the device has work queued
// ahead of the host, so a batch need not be flushed early: graph.go's chunkFlush).
func (f *feed) waiting() bool {
	for _, sl := range f.slots {
		if sl.busy {
			return true
		}
	}
	return false
}

// slot is pinned slot s.
func (f *feed) slot(s int) unsafe.Pointer { return unsafe.Add(f.host, 4*f.size*s) }

// Fed implements backend.Feeder.
func (b *Backend) Fed(n int) backend.Tensor {
	f := &b.fd
	if n <= 0 || n > f.rows {
		panic(fmt.Sprintf("cuda: Fed(%d) after an ArgMaxAhead of %d rows", n, f.rows))
	}
	return &tensor{typ: quant.I32, rows: n, cols: 1, stride: 4, ptr: f.dev.ptr, view: true}
}

// Wait implements backend.Pending.
func (p *pending) Wait(ctx context.Context, dst []int32) error {
	b, f := p.b, &p.b.fd
	if len(dst) != p.rows {
		return fmt.Errorf("cuda: ArgMaxAhead of %d rows waited into %d ids", p.rows, len(dst))
	}
	if b.closed {
		return errors.New("cuda: an ArgMaxAhead result waited for after Close")
	}
	sl := &f.slots[p.slot]
	if !sl.busy || sl.gen != p.gen {
		return errors.New("cuda: an ArgMaxAhead result waited for twice")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.err != nil {
		return b.err
	}
	if r := C.fd_wait(b.h.ctx, sl.ev); r != 0 {
		b.fail(fmt.Errorf("%w (after kernel %s)", cuErr("cuEventSynchronize", "", r), b.last))
		return b.err
	}
	copy(dst, unsafe.Slice((*int32)(f.slot(p.slot)), p.rows))
	sl.busy = false
	if b.st.on {
		b.st.clock.settleDone(b.h.ctx)
	}
	return nil
}

// closeFeed frees the events and the pinned slots (at Close, the device idle).
func (b *Backend) closeFeed() error {
	f := &b.fd
	for i := range f.slots {
		if e := f.slots[i].ev; e != nil {
			C.em_event_free(b.h.ctx, e)
		}
		f.slots[i] = feedSlot{}
	}
	if f.host == nil {
		return nil
	}
	p := f.host
	f.host, f.size = nil, 0
	return b.h.hostFree(p)
}
