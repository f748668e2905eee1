package convert

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress reports the work on one tensor after another to a writer (stderr): on a
// terminal a bar redrawn in place, "[  3/201] blk.0.attn_q.weight F32->Q4_K [=====   ] 61%
// 84.2 MB/s", otherwise one plain line per finished tensor. A nil *Progress reports
// nothing.
type Progress struct {
	w        io.Writer
	terminal bool
	n        int       // tensors in all
	start    time.Time // of the whole run
	done     int64     // input bytes of the finished tensors

	// the tensor in progress
	i        int
	name     string
	from, to string
	size     int64 // its input bytes
	t0       time.Time
	lastDraw time.Time
}

// NewProgress reports on w, drawing a bar when terminal is true. n is the tensor count.
func NewProgress(w io.Writer, terminal bool, n int) *Progress {
	if w == nil {
		return nil
	}
	return &Progress{w: w, terminal: terminal, n: n, start: time.Now()}
}

// Begin starts tensor i (0-based) of size input bytes, converted from one type to another
// (equal names: copied).
func (p *Progress) Begin(i int, name, from, to string, size int64) {
	if p == nil {
		return
	}
	p.i, p.name, p.from, p.to, p.size = i, name, from, to, size
	p.t0 = time.Now()
	p.lastDraw = time.Time{}
	if p.terminal {
		p.draw(0)
	}
}

// Update reports that done of the tensor's input bytes are processed. On a terminal it
// redraws at most ten times a second; otherwise it does nothing.
func (p *Progress) Update(done int64) {
	if p == nil || !p.terminal {
		return
	}
	if time.Since(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.draw(done)
}

// End finishes the tensor, whose output took outBytes.
func (p *Progress) End(outBytes int64) {
	if p == nil {
		return
	}
	p.done += p.size
	el := time.Since(p.t0)
	if p.terminal {
		p.draw(p.size)
		if p.i == p.n-1 {
			fmt.Fprintln(p.w)
		}
		return
	}
	conv := p.from + " -> " + p.to
	if p.from == p.to {
		conv = p.from + " (copied)"
	}
	fmt.Fprintf(p.w, "[%*d/%d] %-32s %-16s %9s -> %-9s %8s\n", width(p.n), p.i+1, p.n, p.name, conv,
		mib(p.size), mib(outBytes), rate(p.size, el))
}

// Warn prints a warning line, keeping a bar intact.
func (p *Progress) Warn(format string, args ...any) {
	if p == nil {
		return
	}
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "warning: "+format+"\n", args...)
}

func (p *Progress) draw(done int64) {
	p.lastDraw = time.Now()
	const barLen = 24
	frac := 1.0
	if p.size > 0 {
		frac = float64(done) / float64(p.size)
	}
	fill := int(frac * barLen)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", barLen-fill)
	conv := p.from + "->" + p.to
	if p.from == p.to {
		conv = p.from + " copy"
	}
	fmt.Fprintf(p.w, "\r\033[K[%*d/%d] %-32s %-11s [%s] %3.0f%% %s", width(p.n), p.i+1, p.n,
		p.name, conv, bar, 100*frac, rate(p.done+done, time.Since(p.start)))
}

func width(n int) int { return len(fmt.Sprint(n)) }

func mib(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }

// rate is a throughput in MB/s of input bytes.
func rate(b int64, d time.Duration) string {
	if d <= 0 {
		return "- MB/s"
	}
	return fmt.Sprintf("%.1f MB/s", float64(b)/1e6/d.Seconds())
}
