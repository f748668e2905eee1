package cuda

// packed is a weight's packed copy for one product kernel (mmf, mmg): 0 if none.
type packed struct {
	ptr   uint64
	no    bool // a copy was declined (no room)
	fresh bool // the copy's kernel may be the last one queued
}

// packCopy returns w's packed copy c, queueing kernel name (w's rows, row stride, row
// count and steps a row, then the copy) the first time, when the device keeps half its
// memory (and f16KeepFree) free after size bytes; 0 when there is none. count and bytes
// are the backend's tally of such copies.
func (b *Backend) packCopy(w *tensor, c *packed, size int, name string, steps int, count, bytes *int) uint64 {
	if c.ptr != 0 || !w.weight || c.no {
		return c.ptr
	}
	p := b.spareAlloc(size)
	if p == 0 {
		c.no = true
		return 0
	}
	b.launch(name, blocks(size/16), 1, 256, 0, w.ptr, i64(w.stride), i64(w.rows), i64(steps), p)
	c.ptr, c.fresh = p, true
	*bytes += size
	*count++
	return p
}

// drop forgets c, a copy of size bytes (Free returns its memory with the weight's),
// taking it off the tally packCopy added it to.
func (c *packed) drop(size int, count, bytes *int) {
	if c.ptr != 0 {
		*count--
		*bytes -= size
		c.ptr = 0
	}
}
