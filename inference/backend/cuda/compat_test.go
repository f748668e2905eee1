package cuda

import (
	"strings"
	"testing"

	"ember/inference/quant"
	kcuda "ember/kernels/cuda"
)

// TestUseCompat: Hopper and later run the committed PTX unless $EMBER_CUDA_COMPAT=1
// asks for the compatibility PTX; compute capability 8.x runs the compatibility PTX
// only when asked (until measured on such a GPU), and says how; older GPUs are refused.
func TestUseCompat(t *testing.T) {
	const hopper, rtx = 232448, 101376 // shared memory a block
	for _, c := range []struct {
		major, smem int
		env         string
		compat      bool
		errPart     string
	}{
		{9, hopper, "", false, ""}, {10, hopper, "", false, ""}, {9, hopper, "1", true, ""}, {9, hopper, "0", false, ""},
		{9, 0, "", false, ""}, // a driver that did not say: Hopper's
		{12, rtx, "1", true, ""}, {12, rtx, "", true, ""}, {12, rtx, "0", false, CompatEnv + "=0"},
		{8, 166912, "1", true, ""}, {8, 166912, "", true, ""}, {8, rtx, "", true, ""}, {8, rtx, "0", false, "99 KiB"},
		{8, rtx, "yes", false, CompatEnv}, {9, hopper, "on", false, CompatEnv},
		{7, rtx, "1", false, "need 8.0"}, {7, rtx, "", false, "need 8.0"},
	} {
		d := Device{Name: "GPU", Major: c.major, Minor: 6, SmemOptin: c.smem}
		got, err := useCompat(d, c.env)
		if got != c.compat || (err == nil) != (c.errPart == "") || err != nil && !strings.Contains(err.Error(), c.errPart) {
			t.Errorf("useCompat(%d.6, %d bytes, %q) = %v, %v; want %v and an error holding %q", c.major, c.smem, c.env, got, err, c.compat, c.errPart)
		}
	}
}

// TestSmemLimit: the device's opt-in limit, lowered (never raised) by
// $EMBER_CUDA_SMEM_LIMIT; a malformed value is an error naming the variable.
func TestSmemLimit(t *testing.T) {
	h100, rtx := Device{SmemOptin: 232448}, Device{SmemOptin: 101376}
	for _, c := range []struct {
		d    Device
		env  string
		want int
		bad  bool
	}{
		{h100, "", 232448, false}, {h100, "101376", 101376, false}, {rtx, "300000", 101376, false},
		{Device{}, "", mmqSmemMax, false}, {h100, "0", 0, true}, {h100, "99K", 0, true}, {h100, "-5", 0, true},
	} {
		got, err := smemLimit(c.d, c.env)
		if got != c.want || (err != nil) != c.bad || err != nil && !strings.Contains(err.Error(), SmemLimitEnv) {
			t.Errorf("smemLimit(%d, %q) = %d, %v; want %d (error %v)", c.d.SmemOptin, c.env, got, err, c.want, c.bad)
		}
	}
}

// TestMMQFit: every tensor-core product type keeps 64-row tiles on Hopper, and on an
// RTX 40's 99 KiB (or an A100's 163) takes the widest tile whose stages fit; the
// grouped products' 16-row tiles and nucleus draws' compatibility block fit them all.
func TestMMQFit(t *testing.T) {
	types := []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q5_0, quant.Q4_0}
	for _, c := range []struct {
		lim  int
		want []int
	}{
		{0, []int{64, 64, 64, 64, 64}},
		{mmqSmemMax, []int{64, 64, 64, 64, 64}},
		{166912, []int{64, 64, 64, 64, 64}}, // A100
		{101376, []int{32, 32, 32, 32, 32}}, // RTX 30/40
	} {
		b := &Backend{smemLim: c.lim}
		for i, typ := range types {
			if got := b.mmqFit(typ, mmqTN); got != c.want[i] {
				t.Errorf("limit %d: mmqFit(%v, 64) = %d, want %d", c.lim, typ, got, c.want[i])
			}
			if got := b.mmqFit(typ, 16); got != 16 {
				t.Errorf("limit %d: mmqFit(%v, 16) = %d: a narrower tile was widened", c.lim, typ, got)
			}
			if n := mmqStagesFor(typ, c.want[i]) * mmqStageBytes(typ, c.want[i]); c.lim > 0 && n > c.lim {
				t.Errorf("limit %d: %v in %d-row tiles takes %d bytes", c.lim, typ, c.want[i], n)
			}
			if c.lim >= 101376 && !b.mmqFits(typ, 16) {
				t.Errorf("limit %d: %v's 16-row grouped tiles do not fit", c.lim, typ)
			}
		}
		if lim := c.lim; lim > 0 && lim < mmqSmemMax && (&Backend{smemLim: lim}).mmqSmem() != lim {
			t.Errorf("limit %d: the products' limit raised to %d", lim, (&Backend{smemLim: lim}).mmqSmem())
		}
	}
	if b := (&Backend{smemLim: 65536}); b.mmqFits(quant.Q8_0, b.mmqFit(quant.Q8_0, mmqTN)) {
		t.Errorf("limit 65536: Q8_0 fits in %d-row tiles, which take more", b.mmqFit(quant.Q8_0, mmqTN))
	}
	if b := (&Backend{compat: true}); b.nucSmem() != nucCompatSmem || nucCompatSmem > 101376 || nucCompatRound > nucRoundMax {
		t.Errorf("the compatibility nucleus block: %d bytes, rounds of %d", b.nucSmem(), nucCompatRound)
	}
}

// TestCompatOff: the compatibility path switches off every kernel family that
// kernels/cuda/sm80 leaves out, and the module list it loads lacks those modules.
func TestCompatOff(t *testing.T) {
	b := &Backend{absorbOn: true, vbOn: true, ffnOn: true}
	b.compatOff()
	if !b.dec.no1c || !b.dec.no1l || b.absorbOn || b.vbOn || b.ffnOn || !b.mvsc.off || !b.mg.off || !b.short.noLatent {
		t.Errorf("compatOff left a Hopper-only path on: %+v", b)
	}
	for _, m := range []string{mgModule, "mvs", "absorb", "attention_long", "ffn"} {
		for _, c := range kcuda.CompatModules {
			if c == m {
				t.Errorf("the compatibility modules hold %s, whose kernels need Hopper", m)
			}
		}
	}
}

// TestPTXISA reads the ISA version a PTX text declares, for the error an old driver's
// refusal gets.
func TestPTXISA(t *testing.T) {
	p, err := kcuda.PTX("ops")
	if err != nil {
		t.Fatal(err)
	}
	if got := ptxISA(p); got == "" || strings.ContainsAny(got, " \n") {
		t.Errorf("ptxISA(ops.ptx) = %q", got)
	}
	if got := ptxISA([]byte("// x\n.version 8.4\n.target sm_80\n")); got != "8.4" {
		t.Errorf("ptxISA = %q, want 8.4", got)
	}
	if got := ptxISA([]byte("no version")); got != "" {
		t.Errorf("ptxISA of no version = %q", got)
	}
}

// TestDecSmemFits: the decode attention's shared memory, sized for blocks an SM, fits the
// SM and each block's limit on Hopper, an A100 and an RTX 30/40 (held there by
// $EMBER_CUDA_SMEM_LIMIT in tests), and Hopper's sizes are as before.
func TestDecSmemFits(t *testing.T) {
	if got := (&Backend{smemLim: 232448}).decScoresMax(128, 2); got != decSMSmem/2-2<<10 {
		t.Errorf("Hopper's two-block scores: %d bytes, want %d", got, decSMSmem/2-2<<10)
	}
	for _, lim := range []int{0, 232448, 166912, 101376} {
		b := &Backend{smemLim: lim}
		blockMax := lim
		if lim == 0 {
			blockMax = mmqSmemMax
		}
		for blocks := 2; blocks <= decMaxBlocks; blocks++ {
			n := b.decScoresMax(128, blocks)
			if blocks*(n+2<<10) > b.smSmem() || n+1<<10 > blockMax {
				t.Errorf("limit %d, %d blocks: %d bytes each, an SM of %d", lim, blocks, n, b.smSmem())
			}
		}
		if n := b.decScoresMax(mlaDim, 1); n+1<<10 > blockMax {
			t.Errorf("limit %d: attention_mla's %d bytes and its static 1 KiB pass the limit", lim, n)
		}
	}
}

// TestShortPlanLimit: on an RTX 30/40's 99 KiB attention_short's tiles shrink to fit
// (grouped 128-dim heads at 256 positions), and Hopper's plans are as before.
func TestShortPlanLimit(t *testing.T) {
	hop, rtx := &Backend{smemLim: 232448}, &Backend{smemLim: 101376}
	if hop.attnSmemMax() != smemMax || rtx.attnSmemMax() > 101376-8<<10 || rtx.attnSmemMax() < 64<<10 {
		t.Errorf("attention_smem's limit: Hopper %d, RTX %d", hop.attnSmemMax(), rtx.attnSmemMax())
	}
	if hop.shortSmem() != shortSmemMax {
		t.Errorf("Hopper: %d bytes, want %d", hop.shortSmem(), shortSmemMax)
	}
	c1, s1 := shortPlan(smThreads, 128, 128, false, 4, 256, shortMaxTile, hop.shortSmem())
	c2, s2 := shortPlan(smThreads, 128, 128, false, 4, 256, shortMaxTile, rtx.shortSmem())
	if c1 != 256 || c2 == 0 || c2 >= c1 || s2 > rtx.shortSmem() || s2+3<<10 > 101376 {
		t.Errorf("256 positions: Hopper tile %d (%d bytes), RTX tile %d (%d bytes)", c1, s1, c2, s2)
	}
}

// TestSplit1Fits: attention_split1, whose blocks wait for each other, takes at most half
// an SM's shared memory a block, less its static bytes and the driver's KiB: Hopper's
// 110 KiB, an A100's 79 (164 KiB an SM), an RTX card's 47 (100); below 32 it stays off.
func TestSplit1Fits(t *testing.T) {
	for _, c := range []struct {
		lim, smem int
		fits      bool
	}{{0, split1SmemMax, true}, {232448, split1SmemMax, true}, {166912, 80896, true}, {101376, 48128, true}, {65536, 30208, false}} {
		b := &Backend{smemLim: c.lim}
		if got, fits := b.split1Smem(), b.split1Fits(); got != c.smem || fits != c.fits {
			t.Errorf("limit %d: split1Smem %d, split1Fits %v; want %d, %v", c.lim, got, fits, c.smem, c.fits)
		}
		if got := 2 * (b.split1Smem() + 1168 + 1<<10); got > b.smSmem() { // static bytes, the driver's KiB
			t.Errorf("limit %d: two blocks take %d bytes of an SM's %d", c.lim, got, b.smSmem())
		}
	}
}
