package kvcache

import "fmt"

// Seq is the block table of one sequence: the blocks that hold its K/V, in position
// order, and its length in token positions. Position pos lives in block
// Blocks()[pos/BlockSize] at row pos%BlockSize.
//
// Invariants (checked by CheckIntegrity): len(Blocks()) == ceil(Len()/BlockSize); no
// block appears twice; the Seq holds one reference to each of its blocks; a partially
// filled last block has reference count 1, so writing the next positions never changes
// K/V that anyone else reads. Full blocks may be shared with other sequences and the
// prefix tree.
//
// A Seq belongs to its Pool and, like it, is used from one goroutine.
type Seq struct {
	p        *Pool
	blocks   []int // block ids, owned; one reference each
	n        int   // token positions filled
	released bool
}

// Copy asks the engine to copy K/V rows [0, Rows) of block Src into block Dst, on every
// layer, before it writes to Dst. Dst is already in the caller's block table.
type Copy struct {
	Src, Dst int // block ids
	Rows     int // token positions, 1..BlockSize-1
}

// NewSeq returns a sequence whose table starts with prefix: full blocks, each holding
// BlockSize positions, for which the caller holds a reference (from Match or Alloc).
// The sequence takes those references over; Len() is len(prefix)*BlockSize. On error
// nothing changes and the caller still holds its references.
func (p *Pool) NewSeq(prefix []int) (*Seq, error) {
	for i, b := range prefix {
		if b < 0 || b >= len(p.ref) {
			return nil, fmt.Errorf("kvcache: new sequence: prefix block %d out of range [0,%d)", b, len(p.ref))
		}
		if p.loose[b] == 0 {
			return nil, fmt.Errorf("kvcache: new sequence: no caller reference to prefix block %d", b)
		}
		for _, c := range prefix[:i] {
			if c == b {
				return nil, fmt.Errorf("kvcache: new sequence: block %d twice in the prefix", b)
			}
		}
	}
	s := &Seq{p: p, blocks: make([]int, len(prefix)), n: len(prefix) * p.blockSize}
	copy(s.blocks, prefix)
	for _, b := range prefix {
		p.loose[b]--
	}
	p.seqs[s] = struct{}{}
	return s, nil
}

// Len returns the number of token positions the sequence holds.
func (s *Seq) Len() int { return s.n }

// Blocks returns the block table. The slice is the sequence's own: read it, do not
// change it, and do not keep it past the next call that changes s or the tree (Insert
// may swap a block for an identical cached one).
func (s *Seq) Blocks() []int { return s.blocks }

// Slot returns where position pos lives: the block id and the row within the block.
// It returns (-1, -1) if pos is outside [0, Len()).
func (s *Seq) Slot(pos int) (block, offset int) {
	if pos < 0 || pos >= s.n {
		return -1, -1
	}
	bs := s.p.blockSize
	return s.blocks[pos/bs], pos % bs
}

// Append extends the sequence by n positions, taking new blocks as positions fill
// (evicting least recently used cached blocks if none are free); the engine then writes
// K/V at Slot(Len()-n) .. Slot(Len()-1). With ErrOutOfBlocks nothing changes.
func (s *Seq) Append(n int) error {
	if s.released {
		return errReleased
	}
	if n < 0 {
		return fmt.Errorf("kvcache: append of %d positions", n)
	}
	bs := s.p.blockSize
	need := (s.n+n+bs-1)/bs - len(s.blocks)
	if err := s.p.reserve(need); err != nil {
		return err
	}
	for range need {
		s.blocks = append(s.blocks, s.p.take())
	}
	s.n += n
	return nil
}

// Truncate shortens the sequence to n positions and releases the blocks past them,
// first to last. If position n falls inside a block that others share (the tree or a
// fork), the sequence gets a private copy of it, because its next positions will be
// written there: the returned Copy says which rows the engine must copy. With
// ErrOutOfBlocks (no block for that copy) nothing changes.
func (s *Seq) Truncate(n int) ([]Copy, error) {
	if s.released {
		return nil, errReleased
	}
	if n < 0 || n > s.n {
		return nil, fmt.Errorf("kvcache: truncate to %d positions: sequence has %d", n, s.n)
	}
	p, bs := s.p, s.p.blockSize
	keep, rows := (n+bs-1)/bs, n%bs
	cow := rows != 0 && p.ref[s.blocks[keep-1]] > 1
	if cow {
		freed := 0
		for _, b := range s.blocks[keep:] {
			if p.ref[b] == 1 {
				freed++
			}
		}
		if !p.canTakeOne(freed) {
			return nil, fmt.Errorf("%w: copy of a shared block on truncate", ErrOutOfBlocks)
		}
	}
	for _, b := range s.blocks[keep:] {
		p.release(b)
	}
	s.blocks = s.blocks[:keep]
	s.n = n
	if !cow {
		return nil, nil
	}
	if err := p.reserve(1); err != nil {
		panic("kvcache: truncate: a block was obtainable and is not: " + err.Error())
	}
	src, dst := s.blocks[keep-1], p.take()
	s.blocks[keep-1] = dst
	p.release(src)
	return []Copy{{Src: src, Dst: dst, Rows: rows}}, nil
}

// Fork returns a new sequence with the same positions. Full blocks are shared (one
// more reference each); a partially filled last block is copied to a new block, which
// the returned Copy asks the engine to fill. With ErrOutOfBlocks nothing changes.
func (s *Seq) Fork() (*Seq, []Copy, error) {
	if s.released {
		return nil, nil, errReleased
	}
	p := s.p
	rows := s.n % p.blockSize
	if rows != 0 {
		if err := p.reserve(1); err != nil {
			return nil, nil, err
		}
	}
	c := &Seq{p: p, blocks: make([]int, len(s.blocks)), n: s.n}
	copy(c.blocks, s.blocks)
	full := len(c.blocks)
	if rows != 0 {
		full--
	}
	for _, b := range c.blocks[:full] {
		p.retain(b)
	}
	var cp []Copy
	if rows != 0 {
		c.blocks[full] = p.take()
		cp = []Copy{{Src: s.blocks[full], Dst: c.blocks[full], Rows: rows}}
	}
	p.seqs[c] = struct{}{}
	return c, cp, nil
}

// Release drops the sequence's references, first block to last, and empties it; cached
// blocks it held become evictable when nothing else holds them. Releasing twice is a
// no-op; a released Seq accepts no further changes.
func (s *Seq) Release() {
	if s.released {
		return
	}
	for _, b := range s.blocks {
		s.p.release(b)
	}
	s.blocks, s.n, s.released = nil, 0, true
	delete(s.p.seqs, s)
}
