package cuda

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// kernel returns the named kernel from whichever module holds it.
func (b *Backend) kernel(name string) *kernel {
	if k, ok := b.kernels[name]; ok {
		return k
	}
	var err error
	for _, m := range b.modules {
		var k *kernel
		if k, err = m.function(name); err == nil {
			b.kernels[name] = k
			if c := b.carveoutFor(name); c >= 0 {
				b.fail(b.h.carveout(k, c))
			}
			if name == "attention_smem" {
				if want := b.attnSmemMax(); b.raiseSmem(k, want) == nil {
					b.attnSmem = min(b.attnSmem, want)
				} else {
					b.attnSmem = min(b.attnSmem, 40<<10) // the default 48 KiB less the static part
				}
			}
			if strings.HasPrefix(name, "mmq") && name != "mmq_reduce" || strings.HasPrefix(name, "mmf") && !strings.HasPrefix(name, "mmf_pack") {
				b.fail(b.raiseSmem(k, b.mmqSmem()))
			}
			if strings.HasPrefix(name, "mmg_q") { // its static part (the stages' barriers) leaves less than mmqSmemMax
				b.fail(b.raiseSmem(k, mgStages*(mgWS+mgXS)))
			}
			if strings.HasPrefix(name, "mvs") {
				b.fail(b.raiseSmem(k, mvsSmemMax))
			}
			if name == "sample_nucleus_f32" {
				b.fail(b.raiseSmem(k, b.nucSmem()))
			}
			return k
		}
	}
	panic(fmt.Sprintf("cuda: kernel %s is in no module: %v", name, err))
}

// maxKernelArgs is the most arguments a launch may pass (EM_MAX_ARGS in launch.h).
const maxKernelArgs = 48

// launch enqueues kernel name with a grid of gx x gy blocks of bx threads.
func (b *Backend) launch(name string, gx, gy, bx, smem int, args ...uint64) {
	if b.err != nil {
		return
	}
	if skipped(b.skip, name, gx) {
		return
	}
	k := b.kernel(name)
	if len(args) > maxKernelArgs {
		panic(fmt.Sprintf("cuda: kernel %s launched with %d arguments, more than %d", name, len(args), maxKernelArgs))
	}
	if b.prof == nil {
		b.chunkFlush()
		b.last = name
		b.enqueue(k, gx, gy, bx, smem, args)
		return
	}
	b.last = name
	t0 := time.Now()
	b.fail(b.h.launch(k, gx, gy, 1, bx, smem, args))
	if r := b.h.sync(); r != 0 {
		b.fail(fmt.Errorf("%w (kernel %s)", cuErr("cuCtxSynchronize", "", r), name))
	}
	b.prof.add(fmt.Sprintf("%s grid %dx%d", name, gx, gy), time.Since(t0))
}

// skipped reports whether $EMBER_CUDA_SKIP's entries leave out a launch of kernel name
// with gx blocks in x: an entry is a name prefix, a name with "$" after it (that name
// only), or a name with "@N" after it (that name's launches of N blocks in x only: one
// of several products on one kernel, as DeepSeek-V2's mmv_id_q4_k@528 for its routed
// gate and up experts).
func skipped(skip []string, name string, gx int) bool {
	for _, p := range skip {
		switch {
		case p == "":
		case strings.HasSuffix(p, "$"):
			if name == p[:len(p)-1] {
				return true
			}
		case strings.Contains(p, "@"):
			i := strings.LastIndexByte(p, '@')
			if name == p[:i] && p[i+1:] == strconv.Itoa(gx) {
				return true
			}
		case strings.HasPrefix(name, p):
			return true
		}
	}
	return false
}
