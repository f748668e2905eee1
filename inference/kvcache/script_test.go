package kvcache

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestScripts runs table-driven state-machine scripts. Each step is
// "op args => expectations"; the harness checks integrity and the K/V read through
// every block table after every step.
//
// Ops: new NAME TOKS (Match + NewSeq + Append); append NAME TOKS; fork NAME NEW;
// truncate NAME N; release NAME; insert NAME [N] (InsertSeq of the first N tokens, all
// by default); probe TOKS (Match, then Free); evict N; alloc; free I (I-th held alloc).
// TOKS is a comma list of ids and inclusive ranges: "0-7,50".
//
// Expectations: err=oob (ErrOutOfBlocks; for append, fork, truncate and alloc the whole
// state must be unchanged; without it the op must succeed), matched=N (new, probe),
// copies=N (fork, truncate), chain=N added=N (insert), evicted=N (evict), and state:
// free=N cached=N evictable=N active=N hits=N misses=N.
func TestScripts(t *testing.T) {
	tests := []struct {
		name          string
		blocks, bsize int
		steps         []string
	}{
		{"prefill insert match", 8, 4, []string{
			"new a 0-9 => matched=0 free=5 cached=0",
			"insert a => chain=2 added=2 cached=2 evictable=0",
			"new b 0-7,50-51 => matched=8 free=4 cached=2 hits=8 misses=12",
			"release a => free=5 evictable=0",
			"release b => free=6 evictable=2 active=0",
			"evict 1 => evicted=1 free=7 cached=1",
			"probe 0-9 => matched=4 hits=12 misses=18",
			"evict 9 => evicted=1 free=8 cached=0",
		}},
		{"divergence inside a chain", 8, 4, []string{
			"new a 0-11",
			"insert a => chain=3 added=3",
			"release a => evictable=3",
			"new b 0-3,20-27 => matched=4",
			"insert b => chain=3 added=2 cached=5",
			"release b => evictable=5 free=3",
			"probe 0-11 => matched=12",
			"probe 0-3,20-27 => matched=12",
			"probe 0-3,20-23,0-3 => matched=8",
			"probe 1-12 => matched=0",
			"evict 2 => evicted=2 cached=3",
		}},
		{"fork shares full blocks and copies the partial one", 8, 4, []string{
			"new a 0-5 => free=6",
			"fork a b => copies=1 free=5",
			"append b 100-101",
			"append a 200",
			"fork b c => copies=0 free=5",
			"append c 300 => free=4",
			"truncate c 5 => copies=1 free=4",
			"release a",
			"release b",
			"release c => free=8",
		}},
		{"truncate copies a block shared with the tree", 6, 4, []string{
			"new a 0-7",
			"insert a => added=2",
			"truncate a 6 => copies=1 free=3 cached=2",
			"append a 9",
			"release a => evictable=2 free=4",
			"probe 0-7 => matched=8",
		}},
		{"truncate to a block boundary copies nothing", 6, 4, []string{
			"new a 0-9",
			"insert a",
			"truncate a 4 => copies=0 free=4 cached=2 evictable=1",
			"append a 40-45 => free=2 cached=2 evictable=1",
		}},
		{"out of blocks changes nothing", 4, 4, []string{
			"new a 0-11 => free=1",
			"append a 12-15 => free=0",
			"append a 16 => err=oob",
			"fork a b => copies=0 free=0",
			"append b 40 => err=oob",
			"alloc => err=oob",
			"release b",
			"truncate a 14 => copies=0",
			"fork a c => err=oob",
			"insert a => chain=3 added=3",
			"truncate a 10 => copies=1 free=0 cached=3",
			"new d 50-53 => matched=0 free=0 cached=2 evictable=0",
			"release a => evictable=2 free=1",
			"append d 54-57 => free=0 cached=2",
			"append d 58-61 => free=0 cached=1",
		}},
		{"truncate refused when everything is locked", 3, 4, []string{
			"new a 0-11",
			"insert a => added=3 free=0",
			"truncate a 6 => err=oob",
			"new b 0-3,20 => err=oob matched=4",
			"release b => cached=3 free=0",
			"truncate a 8 => copies=0 free=0",
		}},
		{"eviction makes room", 4, 4, []string{
			"new a 0-7",
			"insert a",
			"release a => free=2 evictable=2",
			"new b 100-115 => free=0 cached=0",
			"release b => free=4",
		}},
		{"a locked path is not evicted", 8, 4, []string{
			"new a 0-7",
			"insert a",
			"evict 5 => evicted=0 cached=2",
			"new b 0-7,9 => matched=8",
			"release a",
			"evict 5 => evicted=0 cached=2",
			"release b",
			"evict 5 => evicted=2 cached=0 free=8",
		}},
		{"duplicate blocks are deduplicated on insert", 8, 4, []string{
			"new a 0-7",
			"new b 0-7 => matched=0 free=4",
			"insert a => added=2",
			"insert b => chain=2 added=0 free=6",
			"release a => evictable=0",
			"release b => evictable=2",
			"probe 0-7 => matched=8",
		}},
		{"alloc under pressure evicts", 2, 4, []string{
			"new a 0-7",
			"insert a",
			"release a",
			"alloc => free=0 cached=1 evictable=1",
			"alloc => cached=0",
			"alloc => err=oob",
			"free 0 => free=1",
			"free 0 => free=2",
		}},
		{"insert of a prefix", 8, 2, []string{
			"new a 0-8",
			"insert a 5 => chain=2 added=2",
			"insert a => chain=4 added=2",
			"probe 0-8 => matched=8",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.blocks, tc.bsize)
			for i, line := range tc.steps {
				runStep(t, h, i, line)
			}
		})
	}
}

func runStep(t *testing.T, h *harness, i int, line string) {
	t.Helper()
	lhs, rhs, _ := strings.Cut(line, "=>")
	f := strings.Fields(lhs)
	want := map[string]int{}
	wantOOB := false
	for _, kv := range strings.Fields(rhs) {
		k, v, _ := strings.Cut(kv, "=")
		if k == "err" {
			wantOOB = v == "oob"
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("step %d %q: bad expectation %q", i, line, kv)
		}
		want[k] = n
	}
	got := map[string]int{}
	before := h.snapshot()
	var err error
	unchanged := false // the op must leave state unchanged if it fails
	switch f[0] {
	case "new":
		got["matched"], err = h.newSeq(f[1], parseToks(t, f[2]))
	case "append":
		err, unchanged = h.append(h.seq(f[1]), parseToks(t, f[2])), true
	case "fork":
		var cps []Copy
		cps, err = h.fork(h.seq(f[1]), f[2])
		got["copies"], unchanged = len(cps), true
	case "truncate":
		var cps []Copy
		cps, err = h.truncate(h.seq(f[1]), atoi(t, f[2]))
		got["copies"], unchanged = len(cps), true
	case "release":
		h.release(h.seq(f[1]))
	case "insert":
		hs := h.seq(f[1])
		n := len(hs.toks)
		if len(f) > 2 {
			n = atoi(t, f[2])
		}
		got["chain"], got["added"] = h.insert(hs, n)
	case "probe":
		got["matched"] = h.probe(parseToks(t, f[1]))
	case "evict":
		got["evicted"] = h.tr.Evict(atoi(t, f[1]))
	case "alloc":
		err, unchanged = h.alloc(), true
	case "free":
		h.free(atoi(t, f[1]))
	default:
		t.Fatalf("step %d %q: unknown op", i, line)
	}
	switch {
	case wantOOB && !errors.Is(err, ErrOutOfBlocks):
		t.Fatalf("step %d %q: err %v, want ErrOutOfBlocks", i, line, err)
	case !wantOOB && err != nil:
		t.Fatalf("step %d %q: %v", i, line, err)
	case wantOOB && unchanged && h.snapshot() != before:
		t.Fatalf("step %d %q: failed but changed state\nbefore %s\nafter  %s", i, line, before, h.snapshot())
	}
	h.check()
	st := h.p.Stats()
	got["free"], got["cached"], got["evictable"], got["active"] = st.Free, st.Cached, st.Evictable, st.Active
	got["hits"], got["misses"] = int(st.HitTokens), int(st.MissTokens)
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Fatalf("step %d %q: %s = %d (known %v), want %d", i, line, k, g, ok, v)
		}
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// parseToks reads "0-3,9" as [0 1 2 3 9].
func parseToks(t *testing.T, s string) []int32 {
	var out []int32
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a := atoi(t, lo)
		b := a
		if isRange {
			b = atoi(t, hi)
		}
		out = append(out, toks(int32(a), int32(b)+1)...)
	}
	return out
}
