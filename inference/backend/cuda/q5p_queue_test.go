package cuda

import (
	"slices"
	"testing"

	"ember/inference/quant"
)

// TestMMVIDQueueQ5P (no GPU): with Q5PEnv's switch on, a batch-1 routed product of a
// widened Q5_0 weight (its packed copy made: the test sets it) queues mmv_id_q5p over the
// copy (its row stride and expert stride, the rest mmv_id_q8_0's); with the switch off,
// a weight that was not widened, or a paired second product, mmv_id_q8_0 as before.
func TestMMVIDQueueQ5P(t *testing.T) {
	const nExpert, M, K, P = 8, 64, 1408, 6
	for _, c := range []struct {
		on, widened, paired bool
		want                string
	}{
		{true, true, false, "mmv_id_q5p"},
		{false, true, false, "mmv_id_q8_0"},
		{true, false, false, "mmv_id_q8_0"},
		{true, true, true, "mmv_id_q8_0"},
	} {
		q := newQueueOnly(false)
		q.kernels["mmv_id_q8_0"] = &kernel{name: "mmv_id_q8_0"}
		q.kernels["mmv_id_q5p"] = &kernel{name: "mmv_id_q5p"}
		q.q5.on = c.on
		w, w2 := q.tensor(quant.Q8_0, nExpert*M, K), q.tensor(quant.Q8_0, nExpert*M, K)
		w.stride, w2.stride = align16(34*K/32), align16(34*K/32)
		w.weight, w.widened, w.q5p.ptr = true, c.widened, 5<<40
		d, d2, ids := q.f32(P, M), q.f32(P, M), q.tensor(quant.I32, P, 1)
		xq, xs := uint64(1<<40), 1600
		if c.paired {
			q.mmvID(d, w, d2, w2, nExpert, xq, xs, ids, 1)
		} else {
			q.mmvID(d, w, nil, nil, nExpert, xq, xs, ids, 1)
		}
		n0 := int(q.queue.nargs[0])
		args := slices.Clone(q.queue.args[:n0])
		if got := q.names(); !slices.Equal(got, []string{c.want}) {
			t.Fatalf("%+v: queued %v, want %s", c, got, c.want)
		}
		if c.want != "mmv_id_q5p" {
			continue
		}
		st := uint64(q5pStride(K))
		if st != 976 || args[0] != 5<<40 || args[1] != st || args[2] != xq || args[10] != M*st {
			t.Errorf("%+v: args %v: want the copy %#x, stride %d, x %#x, expert stride %d", c, args, uint64(5<<40), st, xq, M*st)
		}
	}
}
