package kvcache

import (
	"math/rand/v2"
	"testing"
)

// benchPrompt is a 4096-token prompt in 16-position blocks, as in a long chat.
func benchPrompt() []int32 {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]int32, 4096)
	for i := range out {
		out[i] = rng.Int32N(150000)
	}
	return out
}

func benchPool(b *testing.B) *Pool {
	p, err := NewPool(1024, 16)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkMatch4k: Match of a fully cached 4096-token prompt (256 blocks: 256 chain
// hashes, map lookups and token compares), then Free of the 256 references.
func BenchmarkMatch4k(b *testing.B) {
	p, prompt := benchPool(b), benchPrompt()
	s, _ := p.NewSeq(nil)
	if err := s.Append(len(prompt)); err != nil {
		b.Fatal(err)
	}
	if c, _, err := p.Tree().InsertSeq(prompt, s); err != nil || c != 256 {
		b.Fatal(c, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		blocks, n := p.Tree().Match(prompt)
		if n != len(prompt) {
			b.Fatal(n)
		}
		for _, blk := range blocks {
			p.Free(blk)
		}
	}
	b.ReportMetric(float64(len(prompt))*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}

// BenchmarkInsert4k: a 4096-token sequence is allocated, inserted as 256 new nodes,
// released and evicted again; every iteration pays all four.
func BenchmarkInsert4k(b *testing.B) {
	p, prompt := benchPool(b), benchPrompt()
	b.ReportAllocs()
	for b.Loop() {
		s, _ := p.NewSeq(nil)
		if err := s.Append(len(prompt)); err != nil {
			b.Fatal(err)
		}
		if _, added, err := p.Tree().InsertSeq(prompt, s); err != nil || added != 256 {
			b.Fatal(added, err)
		}
		s.Release()
		p.Tree().Evict(256)
	}
	b.ReportMetric(float64(len(prompt))*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}

// BenchmarkInsertCached4k: InsertSeq of a sequence whose 256 blocks are all cached
// already (the common case at the end of a turn that matched its whole prompt).
func BenchmarkInsertCached4k(b *testing.B) {
	p, prompt := benchPool(b), benchPrompt()
	s, _ := p.NewSeq(nil)
	if err := s.Append(len(prompt)); err != nil {
		b.Fatal(err)
	}
	p.Tree().InsertSeq(prompt, s)
	b.ReportAllocs()
	for b.Loop() {
		if c, _, err := p.Tree().InsertSeq(prompt, s); err != nil || c != 256 {
			b.Fatal(c, err)
		}
	}
	b.ReportMetric(float64(len(prompt))*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
}
