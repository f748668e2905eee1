package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"ember/inference/quant"
)

// CompatEnv names an environment variable that picks the PTX set: unset, the GPU's own
// (Hopper's kernels on compute capability 9.0 or later with Hopper's shared memory; the
// compatibility PTX, kernels/cuda/sm80, on 8.x: the A100 and, through the driver's
// compiler, the RTX 30 and 40 series, and on RTX 50 cards); "1" the compatibility PTX
// on any GPU (a Hopper GPU then tests that path where no older GPU is at hand); "0" never
// it (an older GPU then runs on the CPU).
const CompatEnv = "EMBER_CUDA_COMPAT"

// SmemLimitEnv names an environment variable: the most shared memory a block may be
// given, in bytes, when below the GPU's own (a Hopper GPU standing in for an RTX 40's
// 99 KiB in tests).
const SmemLimitEnv = "EMBER_CUDA_SMEM_LIMIT"

// compatMinMajor is the oldest compute capability (major) the compatibility PTX runs on.
const compatMinMajor = 8

// useCompat reports whether device d runs the compatibility PTX, given $EMBER_CUDA_COMPAT
// (env), or why it cannot run at all. A GPU of compute capability 9.0 or later with less
// shared memory a block than Hopper's (the RTX 50 series: 99 KiB) takes it as 8.x does:
// the Hopper kernels' blocks (a nucleus draw's 220 KiB) do not fit it. Session 88 ran
// the conformance, product, sampling, attention, MoE and fusion tests and deepseek2's
// goldens on it on an H100, at Hopper's limit and held to 99 KiB; no GPU of 8.x has
// run it yet.
func useCompat(d Device, env string) (bool, error) {
	if env != "" && env != "0" && env != "1" {
		return false, fmt.Errorf("cuda: $%s=%q: want 1 (the compatibility kernels) or 0 (never them)", CompatEnv, env)
	}
	hopper := d.Major >= minMajor && (d.SmemOptin == 0 || d.SmemOptin >= mmqSmemMax)
	switch {
	case hopper:
		return env == "1", nil
	case d.Major >= compatMinMajor && env != "0":
		return true, nil
	case d.Major >= compatMinMajor:
		return false, fmt.Errorf("cuda: %s (compute capability %d.%d, %d KiB of shared memory a block) runs only the "+
			"compatibility kernels, and $%s=0 turns them off", d.Name, d.Major, d.Minor, d.SmemOptin>>10, CompatEnv)
	}
	return false, fmt.Errorf("cuda: %s has compute capability %d.%d; the kernels need %d.0 or later",
		d.Name, d.Major, d.Minor, compatMinMajor)
}

// smemLimit is the most shared memory a block of d may be given: the device's opt-in
// limit, or $EMBER_CUDA_SMEM_LIMIT (env) when that is a smaller positive byte count.
func smemLimit(d Device, env string) (int, error) {
	lim := d.SmemOptin
	if lim <= 0 {
		lim = mmqSmemMax // a driver that did not say: Hopper's
	}
	if env == "" {
		return lim, nil
	}
	n, err := strconv.Atoi(env)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("cuda: $%s=%q: want a positive number of bytes", SmemLimitEnv, env)
	}
	return min(n, lim), nil
}

// compatOff turns off what the compatibility PTX lacks (kernels/cuda/sm80/hopper-only.txt
// and the kernels EM_SM90 leaves out): the cluster kernels (attention_decD_1c and _1l,
// absorb, attention_vb576, ffn, argmax_f32_c), the latent rows' bulk copies (attention_short576), the
// streamed mat-vecs (mvs) and wgmma (mmg). Their work takes the kernels Hopper takes
// with those switched off, which the tests also run on Hopper. Programmatic edges need
// no switch: no compatibility kernel waits on the grid (pdlKernels finds none).
func (b *Backend) compatOff() {
	b.dec.no1c, b.dec.no1l = true, true
	b.absorbOn, b.vbOn, b.ffnOn = false, false, false
	b.amOne = true
	b.mvsc.off = true
	b.mg.off = true
	b.short.noLatent = true
}

// mmqFits reports whether a tensor-core product block of type t and tn-wide tiles gets
// its shared memory on this GPU.
func (b *Backend) mmqFits(t quant.Type, tn int) bool {
	return b.smemLim == 0 || mmqStagesFor(t, tn)*mmqStageBytes(t, tn) <= b.smemLim
}

// mmqFit narrows tile width tn (64, 32, 16) until blocks of type t fit the GPU's shared
// memory (Hopper's fit all; an RTX 40's 99 KiB takes Q4_K in 32-row tiles, Q8_0 in 16).
func (b *Backend) mmqFit(t quant.Type, tn int) int {
	for tn > 16 && !b.mmqFits(t, tn) {
		tn /= 2
	}
	return tn
}

// smemUpTo is n bytes of dynamic shared memory, or less where the GPU's limit less a
// kernel's static bytes is less (no limit: a backend made without a device, in tests).
func (b *Backend) smemUpTo(n, static int) int {
	if b.smemLim > 0 {
		return min(n, b.smemLim-static)
	}
	return n
}

// mmqSmem is the shared memory the tensor-core products' limit is raised to: all the
// GPU gives (mmqFit keeps each launch within it).
func (b *Backend) mmqSmem() int { return b.smemUpTo(mmqSmemMax, 0) }

// nucSmem is sample_nucleus_f32's dynamic shared memory in the PTX in use.
func (b *Backend) nucSmem() int {
	if b.compat {
		return nucCompatSmem
	}
	return nucSmem
}

// ptxISA is the ISA version a PTX text declares (".version X.Y"), "" when none.
func ptxISA(ptx []byte) string {
	_, rest, ok := strings.Cut(string(ptx[:min(len(ptx), 4096)]), "\n.version ")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(v)
}

// shortSmem is the dynamic shared memory attention_short's plans may take: shortSmemMax
// within the GPU's limit (less the kernel's static ~2.2 KiB, as shortSmemMax is Hopper's).
func (b *Backend) shortSmem() int { return b.smemUpTo(shortSmemMax, 3<<10) }

// attnSmemMax is the dynamic shared memory attention_smem's limit is raised to: smemMax,
// within the GPU's limit less 8 KiB for the kernel's static part.
func (b *Backend) attnSmemMax() int { return b.smemUpTo(smemMax, 8<<10) }

// split1Fits reports whether attention_split1 may run: two of its blocks of at least
// 32 KiB (split1Smem) fit an SM, as its grid's wait for all its blocks needs.
func (b *Backend) split1Fits() bool { return b.split1Smem() >= 32<<10 }
