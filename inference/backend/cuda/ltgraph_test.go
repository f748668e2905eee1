package cuda

import (
	"testing"

	"ember/inference/quant"
)

// TestBatchLtCalls: a batch's cuBLASLt products are part of what makes two batches
// equal (and the same graph), and of their hash; a clone keeps them; reset drops them.
func TestBatchLtCalls(t *testing.T) {
	b := &Backend{kernels: map[string]*kernel{"k": {name: "k"}}, act: map[quant.Type]*scratch{}}
	p1, p2 := &ltPlan{}, &ltPlan{}
	fill := func(plan *ltPlan, d uint64) batch {
		b.queue.reset()
		b.enqueue(b.kernels["k"], 1, 1, 32, 0, []uint64{7})
		b.queueLt(ltCall{plan: plan, a: 1, b: 2, d: d, ws: 3})
		b.enqueue(b.kernels["k"], 1, 1, 32, 0, []uint64{8})
		return *b.queue.clone()
	}
	x, y := fill(p1, 100), fill(p1, 100)
	if !x.equal(&y) || x.hash() != y.hash() {
		t.Fatal("equal batches: not equal or different hashes")
	}
	if len(x.lts) != 1 || x.lts[0].pos != 1 || x.size() != 3 {
		t.Fatalf("the product is %+v of %d ops, want one at position 1 of 3", x.lts, x.size())
	}
	for name, z := range map[string]batch{"another output": fill(p1, 200), "another plan": fill(p2, 100)} {
		if x.equal(&z) || x.hash() == z.hash() {
			t.Errorf("%s: equal to the first batch or the same hash", name)
		}
	}
	b.queue.reset()
	if b.queue.size() != 0 {
		t.Fatalf("after reset: %d ops", b.queue.size())
	}
}

// TestQueueLtEndsFusion: a product queued after a fusable launch ends the fusion record,
// so that a later fusion does not move that launch past the product.
func TestQueueLtEndsFusion(t *testing.T) {
	q := newMMQQueue("add_f32")
	q.fuse.cfg = fuseCfg{read: true}
	q.enqueue(q.kernels["add_f32"], 1, 1, 256, 0, []uint64{1})
	q.mark(fusable{kind: fuseAdd, dst: 1, rows: 1, cols: 256})
	q.queueLt(ltCall{plan: &ltPlan{}})
	if _, ok := q.take(); ok {
		t.Fatal("the add was still fusable after a cuBLASLt product")
	}
}
