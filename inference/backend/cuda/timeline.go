package cuda

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"unsafe"

	kcuda "ember/kernels/cuda"
)

// The timeline of one batch, for finding where a decode step's time goes on the GPU
// machine, which has no nsys: with $EMBER_CUDA_TIMELINE=N and PTX made by
// build/timeline-ptx.sh (loaded with $EMBER_CUDA_PTX_DIR), every kernel's first thread
// records in its module's em_tl the global timer when it reached its wait for the
// kernel before (griddepcontrol.wait), when the wait let it go, its grid's blocks and
// its %gridid (build/timeline-cuh.py rewrites pdl_wait so; the committed kernels do
// nothing of the kind). For the Nth batch the backend launches it zeroes the counts
// before, waits for the batch after, reads the records, matches them to the batch's
// launches and writes each launch's times, and a summary by kernel, to stderr. In a
// chain, the time from one kernel's release to the next one's is what that kernel adds
// to the step (its work after the wait, its last block's end, the next launch's start):
// the skip table's figure for every kernel at once, without leaving any out.

// TimelineEnv names an environment variable: the batch (flush) whose timeline the
// backend writes, counted from 1.
const TimelineEnv = "EMBER_CUDA_TIMELINE"

// tlMax is EM_TL_MAX of build/timeline-cuh.py: the records a module keeps.
const tlMax = 4096

// timeline is the recording's state on a Backend.
type timeline struct {
	read  bool
	at    int        // the batch recorded (flush epoch); 0: none
	mods  []tlModule // the modules with em_tl
	names []string   // the batch's launches
	grids []int      // their blocks
	mi    []int      // their modules (index in mods, -1: none)
	preds [][2]int   // the launches each follows (-1: none), as the graph's edges
}

// tlModule is a module's em_tl and em_tl_n.
type tlModule struct {
	m       *module
	buf, np uint64
}

// tlRec is one kernel's record: the timer (ns) at its wait and after it, its blocks,
// its grid's %gridid (the launch's number: 0 in PTX from before it was recorded).
type tlRec struct {
	arrive, release uint64
	blocks          int
	id              uint64
}

// timelineAt reports whether the batch being flushed (epoch) is the one to record,
// reading $EMBER_CUDA_TIMELINE once.
func (b *Backend) timelineAt() bool {
	tl := &b.tl
	if !tl.read {
		tl.read = true
		tl.at, _ = strconv.Atoi(os.Getenv(TimelineEnv))
	}
	return tl.at > 0 && tl.at == b.epoch
}

// timelineBegin waits for the work before, finds the modules' em_tl, zeroes their
// counts and keeps the queued batch's launches.
func (b *Backend) timelineBegin() {
	tl := &b.tl
	if r := b.h.sync(); r != 0 {
		b.fail(cuErr("cuCtxSynchronize", "timeline", r))
		return
	}
	tl.mods = tl.mods[:0]
	idx := map[*module]int{}
	for _, m := range b.modules {
		buf, _, err1 := b.h.global(m, "em_tl")
		np, _, err2 := b.h.global(m, "em_tl_n")
		if err1 != nil || err2 != nil {
			continue
		}
		var zero uint32
		b.fail(b.h.htod(np, unsafe.Pointer(&zero), 4))
		idx[m] = len(tl.mods)
		tl.mods = append(tl.mods, tlModule{m: m, buf: buf, np: np})
	}
	if len(tl.mods) == 0 {
		fmt.Fprintf(os.Stderr, "cuda timeline: no module has em_tl (PTX from build/timeline-ptx.sh, loaded with %s)\n", kcuda.DirEnv)
		tl.at = 0
		return
	}
	q := &b.queue
	tl.names, tl.grids, tl.mi = slices.Clone(q.names), tl.grids[:0], tl.mi[:0]
	for i, name := range q.names {
		tl.grids = append(tl.grids, int(q.dims[5*i])*int(q.dims[5*i+1])*int(q.dims[5*i+2]))
		mi := -1
		if k := b.kernels[name]; k != nil && k.mod != nil {
			if j, ok := idx[k.mod]; ok {
				mi = j
			}
		}
		tl.mi = append(tl.mi, mi)
	}
	tl.preds = tl.preds[:0]
	p0, p1, _, _, ok := q.dag(b.br.edges)
	for i := range q.fns {
		if ok {
			tl.preds = append(tl.preds, [2]int{int(p0[i]), int(p1[i])})
		} else {
			tl.preds = append(tl.preds, [2]int{i - 1, -1})
		}
	}
}

// timelineEnd waits for the batch, reads the records and writes the report to stderr.
func (b *Backend) timelineEnd() {
	tl := &b.tl
	if tl.at == 0 || b.err != nil {
		return
	}
	if r := b.h.sync(); r != 0 {
		b.fail(cuErr("cuCtxSynchronize", "timeline", r))
		return
	}
	recs := make([][]tlRec, len(tl.mods))
	for j, m := range tl.mods {
		var n uint32
		if err := b.h.dtoh(unsafe.Pointer(&n), m.np, 4); err != nil {
			b.fail(err)
			return
		}
		n = min(n, tlMax)
		if n == 0 {
			continue
		}
		raw := make([]uint64, 4*n)
		if err := b.h.dtoh(unsafe.Pointer(&raw[0]), m.buf, 8*len(raw)); err != nil {
			b.fail(err)
			return
		}
		for i := 0; i < int(n); i++ {
			recs[j] = append(recs[j], tlRec{raw[4*i], raw[4*i+1], int(raw[4*i+2]), raw[4*i+3]})
		}
	}
	out, how := tlMatch(tl.mi, tl.grids, tl.names, recs)
	fmt.Fprintf(os.Stderr, "cuda timeline: records %s\n", how)
	tlReport(os.Stderr, b.epoch, tl.names, out, tl.preds)
}

// tlMatch gives each launch (its module mi[i], grid[i] blocks) its module's record
// (tlFirstWaits: one a launch). The records' grid ids order them as the launches were
// made: where all the records, in that order, fall to the launches one for one
// (modules and grids alike), that is the match. Otherwise (PTX without ids, a record
// lost) a module's records, in id order (else the order the kernels' waits ended), go
// to its launches in turn, each launch taking the first unused of the next four with
// its grid, else the first unused. A launch with no record left gets the zero record.
func tlMatch(mi, grid []int, names []string, recs [][]tlRec) ([]tlRec, string) {
	for j := range recs {
		recs[j] = tlFirstWaits(recs[j])
	}
	out, why := tlMatchIDs(mi, grid, names, recs)
	if why == "" {
		return out, "matched by grid ids"
	}
	used := make([][]bool, len(recs))
	next := make([]int, len(recs))
	for j := range recs {
		used[j] = make([]bool, len(recs[j]))
	}
	out = make([]tlRec, len(mi))
	for i, j := range mi {
		if j < 0 {
			continue
		}
		for next[j] < len(recs[j]) && used[j][next[j]] {
			next[j]++
		}
		pick := -1
		for k := next[j]; k < min(len(recs[j]), next[j]+4); k++ {
			if !used[j][k] && recs[j][k].blocks == grid[i] {
				pick = k
				break
			}
		}
		if pick < 0 && next[j] < len(recs[j]) {
			pick = next[j]
		}
		if pick >= 0 {
			used[j][pick] = true
			out[i] = recs[j][pick]
		}
	}
	return out, "matched by module order (" + why + ")"
}

// tlFirstWaits sorts a module's records by grid id and keeps each grid's first wait: a
// kernel that waits twice (mmv_id_*: pdl_entry, then mv1's own pdl_wait; the second
// returns at once) records twice. Records without ids (0) are all kept, in their order.
func tlFirstWaits(rs []tlRec) []tlRec {
	slices.SortStableFunc(rs, func(a, b tlRec) int {
		if a.id == 0 || b.id == 0 {
			return cmp.Compare(a.id, b.id)
		}
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.arrive, b.arrive))
	})
	out := rs[:0]
	for i, r := range rs {
		if i > 0 && r.id != 0 && r.id == rs[i-1].id {
			continue
		}
		out = append(out, r)
	}
	return out
}

// tlMatchIDs is tlMatch's one-for-one match by grid ids: all the records in id order
// against the launches that have a module, each pair of the same module and grid; else
// why not.
func tlMatchIDs(mi, grid []int, names []string, recs [][]tlRec) ([]tlRec, string) {
	type mrec struct {
		rec tlRec
		mod int
	}
	var all []mrec
	for j, rs := range recs {
		for _, r := range rs {
			if r.id == 0 {
				return nil, "records without grid ids"
			}
			all = append(all, mrec{r, j})
		}
	}
	slices.SortStableFunc(all, func(a, b mrec) int { return cmp.Compare(a.rec.id, b.rec.id) })
	out := make([]tlRec, len(mi))
	k := 0
	for i, j := range mi {
		if j < 0 {
			continue
		}
		if k >= len(all) {
			return nil, fmt.Sprintf("%d records for more launches", len(all))
		}
		if all[k].mod != j || all[k].rec.blocks != grid[i] {
			return nil, fmt.Sprintf("launch %d %s: module %d, %d blocks; record %d: module %d, %d blocks",
				i, names[i], j, grid[i], k, all[k].mod, all[k].rec.blocks)
		}
		out[i] = all[k].rec
		k++
	}
	if k != len(all) {
		return nil, fmt.Sprintf("%d records for %d launches", len(all), k)
	}
	return out, ""
}

// tlReport writes the batch's launches in the order their waits ended (times in us
// from the first release; "span": to the next release; "done": to the first release of
// a launch that follows it (preds: the launches each follows, -1 none), which is when
// it ended where that launch was waiting for it, so a kernel beside another in a
// branch gets its own time) and the spans and the done times summed by kernel, largest
// span first. Launches with no record are counted at the end.
func tlReport(w io.Writer, batch int, names []string, recs []tlRec, preds [][2]int) {
	type row struct {
		name               string
		launch             int // its place in the batch
		rec                tlRec
		span, waited, done float64 // to the next release; block 0's arrival to its release; to a follower's release (-1: none)
	}
	var rows []row
	missing := 0
	next := make([]uint64, len(recs)) // the first release of a launch following each
	for i, p := range preds {
		for _, j := range p {
			if j >= 0 && j < len(recs) && recs[i].release != 0 && (next[j] == 0 || recs[i].release < next[j]) {
				next[j] = recs[i].release
			}
		}
	}
	for i, r := range recs {
		if r.release == 0 {
			missing++
			continue
		}
		done := -1.0
		if next[i] != 0 {
			done = float64(int64(next[i]-r.release)) / 1e3
		}
		rows = append(rows, row{name: names[i], launch: i, rec: r, done: done})
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "cuda timeline of batch %d: no records\n", batch)
		return
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.rec.release, b.rec.release) })
	t0 := rows[0].rec.release
	us := func(t uint64) float64 { return float64(int64(t-t0)) / 1e3 }
	for i := range rows {
		rows[i].waited = us(rows[i].rec.release) - us(rows[i].rec.arrive)
		if i+1 < len(rows) {
			rows[i].span = us(rows[i+1].rec.release) - us(rows[i].rec.release)
		}
	}
	total := us(rows[len(rows)-1].rec.release)
	fmt.Fprintf(w, "cuda timeline of batch %d: %d launches, %.1f us from the first release to the last (%d without a record)\n",
		batch, len(rows), total, missing)
	// waited: block 0's time in its wait (long: the kernel before held it; none: it
	// arrived after the kernel before had ended, so its launch or its own work before
	// the wait is what the step waited for)
	fmt.Fprintf(w, "%5s %6s %-28s %7s %10s %10s %8s %8s %8s\n", "#", "launch", "kernel", "blocks", "arrive us", "release us", "waited",
		"span us", "done us")
	for i, r := range rows {
		fmt.Fprintf(w, "%5d %6d %-28s %7d %10.2f %10.2f %8.2f %8.2f %8.2f\n", i, r.launch, r.name, r.rec.blocks, us(r.rec.arrive),
			us(r.rec.release), r.waited, r.span, r.done)
	}
	type sum struct {
		name               string
		n, nd              int
		span, waited, done float64
	}
	by := map[string]*sum{}
	var sums []*sum
	for _, r := range rows {
		s := by[r.name]
		if s == nil {
			s = &sum{name: r.name}
			by[r.name] = s
			sums = append(sums, s)
		}
		s.n++
		s.span += r.span
		s.waited += r.waited
		if r.done >= 0 {
			s.nd++
			s.done += r.done
		}
	}
	slices.SortStableFunc(sums, func(a, b *sum) int { return cmp.Compare(b.span, a.span) })
	fmt.Fprintf(w, "%-28s %6s %10s %8s %6s %11s %9s\n", "kernel", "count", "span us", "each us", "share", "waited each", "done each")
	for _, s := range sums {
		done := -1.0
		if s.nd > 0 {
			done = s.done / float64(s.nd)
		}
		fmt.Fprintf(w, "%-28s %6d %10.2f %8.2f %5.1f%% %11.2f %9.2f\n", s.name, s.n, s.span, s.span/float64(s.n),
			100*s.span/max(total, 1e-9), s.waited/float64(s.n), done)
	}
}
