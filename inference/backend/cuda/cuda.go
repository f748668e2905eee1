// Package cuda is the CUDA backend: the driver API loaded with dlopen at run time (no CUDA
// at build time, so one binary runs with or without a GPU), kernels from the PTX that
// kernels/cuda embeds, every op enqueued on the device's default stream.
//
// Tensors live in device memory. Weights are uploaded once in their GGUF layout, except
// Q8_0 and Q6_K rows, which are repacked so that their quants are 16-byte aligned
// (kernels/cuda/common.cuh). MatMul rounds the activation to the weight type's dot
// partner on the GPU and takes integer (or half) dots, exactly as package ref does.
package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"ember/inference/backend"
	"ember/inference/quant"
	kcuda "ember/kernels/cuda"
)

// Options configure the backend.
type Options struct {
	// Device is the GPU ordinal.
	Device int
	// CublasMinRows is the activation rows from which products go to cuBLASLt where it
	// is present (cublaslt_matmul.go); 0 means 256. $EMBER_CUDA_CUBLAS_MIN_ROWS
	// overrides it.
	CublasMinRows int
	// NoCublas keeps every product on our kernels (as $EMBER_CUDA_NO_CUBLAS does).
	NoCublas bool
}

// Backend runs ops on one GPU. Like the device stream it feeds, it is driven by one
// goroutine at a time.
type Backend struct {
	h         *ctxHandle
	dev       Device
	modules   []*module
	kernels   map[string]*kernel      // by name, looked up on first use
	live      map[uint64]int          // allocations by address: size in bytes
	pool      map[int][]uint64        // freed allocations by size, reused by New
	err       error                   // the first device failure, reported by Sync and ReadF32
	last      string                  // the last kernel launched, named by asynchronous errors
	act       map[quant.Type]*scratch // quantized activation rows, by format
	topk1     scratch                 // TopK's first pass (topkTo)
	scratches []uint64                // every scratch buffer, freed at Close
	mmqPart   scratch                 // partial sums of split tensor-core products (mmq.go)
	moeGroup  scratch                 // the grouped experts' pair map and tiles (moe.go)
	noPDL     bool                    // $EMBER_CUDA_NO_PDL: full edges only in graphs (pdl.go)
	closed    bool
	prof      *profiler           // set by $EMBER_CUDA_PROFILE
	queue     batch               // launches not yet issued (graph.go)
	seen      map[uint64]bool     // hashes of batches launched directly (graph.go)
	graphs    map[uint64][]*graph // instantiated graphs of repeated batches, by hash
	nGraphs   int
	noGraphs  bool           // $EMBER_CUDA_NO_GRAPHS: launch every batch directly
	noMMQ     bool           // $EMBER_CUDA_NO_MMQ: mat-vec kernels for every batch
	hostMoE   bool           // $EMBER_CUDA_HOST_MOE: RoutedExperts declines (moe.go)
	moeTN     int            // $EMBER_CUDA_MOE_TILE: the grouped experts' tile width, 0 to choose (moe.go)
	routeGrid int            // $EMBER_CUDA_ROUTE_GRID: mmv_route_q4_k's blocks in all, 0 for three an SM (moe.go)
	noF32W    bool           // $EMBER_CUDA_F32W is 0: batch-1 F32 weights on mmv_f32_1 (matmul.go)
	noNR      bool           // $EMBER_CUDA_NO_NORM_ROUTER: NormRouter declines (normrouter.go)
	ffnOn     bool           // $EMBER_CUDA_FFN: a decode row's FFN half in one launch (ffn.go)
	ffnPart   scratch        // ffn_q4_k's counters and partial sums (ffn.go)
	absorbOn  bool           // DeepSeek's absorbed query in one launch unless $EMBER_CUDA_ABSORB=off (absorb.go)
	vbOn      bool           // DeepSeek's latent attention and attn_v_b in one launch unless $EMBER_CUDA_VB=off (latentvb.go)
	noGuess   bool           // $EMBER_CUDA_ROUTE_SPEC=off: mmv_route_q4_k loads no guessed experts while it routes (moe.go)
	mmqTN     int            // $EMBER_CUDA_MMQ_TILE: the products' tile width, 0 to choose (mmq.go)
	skip      []string       // $EMBER_CUDA_SKIP: kernel name prefixes not launched
	st        stats          // $EMBER_CUDA_STATS
	attnSmem  int            // shared memory attention_smem may use; 0 forces the other kernels
	mvsc      mvsConf        // the streamed batch-1 products (mvs.go)
	routeWide int            // the wider routing kernels (RouteWideEnv: 1 mmv_route_q4_k_64, 2 mmv_route_q4_k)
	split     attSplit       // split attention's scratch and mode (attention_split.go)
	prefill   attTC          // tensor-core prefill attention's mode (attention_prefill.go)
	dec       attDec         // tensor-core decode attention's modes (attention_dec.go)
	noIDW     bool           // $EMBER_CUDA_NO_IDW: per-head runs of weights on mmv_id, not mmv_idw (groups.go)
	amOne     bool           // $EMBER_CUDA_ARGMAX_ONE or the compatibility kernels: argmax_f32, not argmax_f32_c (argmax.go)
	widen     bool           // Q5_0 weights stored as Q8_0 unless $EMBER_CUDA_WIDEN=0 (widen.go)
	evict     denseEvict     // the dense batch-1 products' evict-first loads (evict.go)
	ropeHPB   int            // heads a block of rope2_f32 and rope2_set rotates ($EMBER_CUDA_ROPE_HEADS, else ropeHeads)
	nucRound  int            // a nucleus draw's most candidates a round past the first ($EMBER_CUDA_NUC_ROUND, else nucRoundMax)
	nucFirst  int            // and the candidates of the round after the first ($EMBER_CUDA_NUC_FIRST, else nucFirst)
	short     attShort       // short-context decode attention's mode (attention_short.go)
	fuse      fusable        // the last queued launch, when a quantization may absorb it (fuse.go)
	mlaKV     mlaKVRec       // the last mla_kv launch, which a rope2_set of one tensor may join (mla.go)
	tl        timeline       // $EMBER_CUDA_TIMELINE (timeline.go)
	epoch     int            // flushes so far
	chunk     int            // launches a batch takes before the next launch flushes it (graph.go)
	sinceSync int            // flushes since the last sync (graph.go's chunkNow)
	noRamp    bool           // $EMBER_CUDA_CHUNK_RAMP=0: whole chunks after a sync too
	dryFlush  func([]string) // tests without a device: takes each flushed batch's kernel names
	stage     stage          // pinned memory that host writes are queued from (stage.go)
	rstage    readStage      // pinned memory that host reads land in (stage.go)
	fd        feed           // the ids of steps decoded ahead of the host (feed.go)
	lt        ltState        // cuBLASLt for large products, when present (cublaslt_matmul.go)
	f16c      f16Copies      // f16 copies of weights for batched products (f16copy.go)
	mf        mfConf         // the f16 tensor-core product over quantized weights (mmf.go)
	mg        mgConf         // the wgmma product over Q4_K weights (mmg.go)
	q5        q5pConf        // the routed products over packed Q5_0 copies (q5p.go)
	capt      ltCapture      // capturing cuBLASLt's products into graphs (ltgraph.go)
	br        branchState    // the side branch being queued (branch.go)
	carve     int            // the preferred shared memory carveout of the kernels carved names, per cent; -1: the driver's (carveout.go)
	carved    []string       // kernel name prefixes given carve; nil: every kernel
	compat    bool           // on the compatibility PTX (compute capability 8.x, or $EMBER_CUDA_COMPAT: compat.go)
	smemLim   int            // the most shared memory a block may be given (bytes; 0 in tests without a device: no limit)
	cubins    int            // modules loaded from machine code made for this GPU (cubin.go)
}

var _ backend.Backend = (*Backend)(nil)
var _ backend.SharedMatMuler = (*Backend)(nil)

// minMajor is the oldest compute capability (major) the embedded kernels load on: their
// PTX targets sm_90 (griddepcontrol for programmatic dependent launch, thread block
// clusters, 227 KiB of shared memory a block for the tensor-core products), which the
// driver compiles for sm_90 and later only. Older GPUs take the compatibility PTX
// (compat.go).
const minMajor = 9

// New starts a backend on GPU opt.Device. The error wraps ErrNoDriver when there is no
// driver or GPU.
func New(opt Options) (*Backend, error) {
	devs, err := Devices()
	if err != nil {
		return nil, err
	}
	if opt.Device < 0 || opt.Device >= len(devs) {
		return nil, fmt.Errorf("cuda: device %d of %d", opt.Device, len(devs))
	}
	d := devs[opt.Device]
	compat, err := useCompat(d, os.Getenv(CompatEnv))
	if err != nil {
		return nil, err
	}
	lim, err := smemLimit(d, os.Getenv(SmemLimitEnv))
	if err != nil {
		return nil, err
	}
	h, err := retain(opt.Device)
	if err != nil {
		return nil, err
	}
	b := &Backend{h: h, dev: d, kernels: map[string]*kernel{}, live: map[uint64]int{}, pool: map[int][]uint64{},
		act: map[quant.Type]*scratch{}, prof: newProfiler(), seen: map[uint64]bool{}, graphs: map[uint64][]*graph{},
		noGraphs: os.Getenv("EMBER_CUDA_NO_GRAPHS") != "", noPDL: os.Getenv("EMBER_CUDA_NO_PDL") != "", noMMQ: os.Getenv(NoMMQEnv) != "",
		hostMoE: os.Getenv(HostMoEEnv) != "", dec: attDec{twoPass: os.Getenv(DecTwoPassEnv) != "", ownQ8K: os.Getenv(DecOwnQ8KEnv) != "", no1: os.Getenv(NoDec1Env) != "", no1c: os.Getenv(NoDec1CEnv) != "", no1l: os.Getenv(NoDec1LEnv) != "", l1: os.Getenv(Dec1L1Env) != "", lThreads: decIntEnv(Dec1LThreadsEnv), lTiles: decIntEnv(Dec1LTilesEnv), noMLA2: os.Getenv(NoMLA2Env) != "", full1: os.Getenv(Dec1FullEnv) != "", stages: decIntEnv(DecStagesEnv), blocks: decIntEnv(DecBlocksEnv), mlaSplit: mlaSplitMode(), gqa: decGQAMode()},
		st: stats{on: os.Getenv(StatsEnv) != "", start: time.Now(), rng: profRangeFromEnv()}, attnSmem: smemMax, mvsc: mvsFromEnv(),
		carve: carveoutFromEnv(), carved: carveoutKernelsFromEnv(), chunk: chunkFromEnv(), noRamp: os.Getenv(ChunkRampEnv) == "0", br: branchFromEnv(), ropeHPB: ropeHeadsFromEnv(), noIDW: os.Getenv(NoIDWEnv) != "", amOne: os.Getenv(ArgMaxOneEnv) != "", widen: widenFromEnv(), q5: q5pFromEnv(),
		nucRound: nucRoundFromEnv(NucRoundEnv, nucRoundMax), nucFirst: nucRoundFromEnv(NucFirstEnv, nucFirst),
		compat: compat, smemLim: lim}
	b.capt.failed = os.Getenv(LtNoGraphsEnv) != ""
	if b.mf, err = mfFromEnv(); err != nil {
		b.Close()
		return nil, err
	}
	if b.f16c, err = f16CopiesFromEnv(); err != nil {
		b.Close()
		return nil, err
	}
	if b.mg, err = mgFromEnv(); err != nil {
		b.Close()
		return nil, err
	}
	if b.evict, err = denseEvictFromEnv(); err != nil {
		b.Close()
		return nil, err
	}
	b.noF32W = os.Getenv(F32WeightEnv) == "0"
	b.routeWide = routeWideFromEnv(os.Getenv(RouteWideEnv))
	b.noNR = os.Getenv(NoNormRouterEnv) != ""
	b.ffnOn = os.Getenv(FFNEnv) != ""
	b.absorbOn = os.Getenv(AbsorbEnv) != "off"
	b.vbOn = os.Getenv(VBEnv) != "off"
	b.noGuess = os.Getenv(RouteSpecEnv) == "off"
	if v := os.Getenv(SkipEnv); v != "" {
		b.skip = strings.Split(v, ",")
	}
	for _, e := range []struct {
		name string
		to   *int
		ok   []int
	}{{MoETileEnv, &b.moeTN, []int{8, 16, mmqTN}}, {MMQTileEnv, &b.mmqTN, []int{16, 32, mmqTN}}} {
		if v := os.Getenv(e.name); v != "" {
			if *e.to, err = strconv.Atoi(v); err != nil || !slices.Contains(e.ok, *e.to) {
				b.Close()
				return nil, fmt.Errorf("cuda: $%s=%q: want one of %v", e.name, v, e.ok)
			}
		}
	}
	if v := os.Getenv(RouteGridEnv); v != "" {
		if b.routeGrid, err = strconv.Atoi(v); err != nil || b.routeGrid < 1 {
			b.Close()
			return nil, fmt.Errorf("cuda: $%s=%q: want a positive number of blocks", RouteGridEnv, v)
		}
	}
	names, ptxOf := kcuda.Modules, kcuda.PTX
	if lim < mgStages*(mgWS+mgXS) || lim < mvsSmemMax { // a limit below Hopper's ($EMBER_CUDA_SMEM_LIMIT)
		b.mg.off, b.mvsc.off = true, true
	}
	if b.compat {
		names, ptxOf = kcuda.CompatModules, kcuda.CompatPTX
		b.compatOff()
		b.nucRound, b.nucFirst = min(b.nucRound, nucCompatRound), min(b.nucFirst, nucCompatRound) // its NUC_ROUND
	}
	if err := b.loadModules(h, names, ptxOf, os.Getenv(CubinEnv)); err != nil {
		b.Close()
		return nil, err
	}
	b.kernel("attention_smem") // raises its shared memory limit before Attention sizes it
	b.openLt(opt)
	return b, nil
}

// Name implements backend.Backend.
func (*Backend) Name() string { return "cuda" }

// Device is the GPU in use.
func (b *Backend) Device() Device { return b.dev }

// tensor is device memory: rows of stride bytes from ptr. Q8_0 and Q6_K weights are
// packed per row (packed), other types keep their GGUF block layout.
type tensor struct {
	typ        quant.Type
	rows, cols int
	stride     int    // bytes per row on the device
	ptr        uint64 // row 0
	size       int    // bytes allocated (0 for a view)
	view       bool
	freed      bool
	weight     bool   // made by Weight
	ofWeight   bool   // a view of a weight's rows (View): read-only as the weight is
	f16        uint64 // the f16 copy of a weight's rows (f16copy.go), 0 if none
	noF16      bool   // a copy was declined (no room, or a type without one)
	mfp        packed // mmf's packed copy of a weight (mmf.go)
	mgp        packed // mmg's packed copy of a Q4_K weight (mmg.go)
	widened    bool   // Q5_0 rows stored as Q8_0 (widen.go): a q5p copy holds them
	q5p        packed // mmv_id_q5p's packed copy of a widened weight (q5p.go)
}

func (t *tensor) Type() quant.Type { return t.typ }
func (t *tensor) Rows() int        { return t.rows }
func (t *tensor) Cols() int        { return t.cols }

func align16(n int) int { return (n + 15) &^ 15 }

// fail records the first device failure; later ops are skipped until Sync reports it.
func (b *Backend) fail(err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
}

func (b *Backend) alloc(n int) (uint64, error) {
	n = align16(max(n, 16))
	if l := b.pool[n]; len(l) > 0 {
		p := l[len(l)-1]
		b.pool[n] = l[:len(l)-1]
		b.live[p] = n
		return p, nil
	}
	p, err := b.h.alloc(n)
	if err != nil {
		return 0, fmt.Errorf("%w (%d bytes)", err, n)
	}
	b.live[p] = n
	return p, nil
}

// Weight implements backend.Backend: the bytes are copied to the device.
func (b *Backend) Weight(typ quant.Type, rows, cols int, data []byte) (backend.Tensor, error) {
	if !canMultiply(typ) {
		return nil, fmt.Errorf("cuda: %v weights: %w", typ, backend.ErrUnsupported)
	}
	rb64, err := quant.RowBytes(typ, uint64(cols))
	if err != nil || rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("cuda: weight of %d x %d %v: %v", rows, cols, typ, err)
	}
	rb := int(rb64)
	if len(data) != rows*rb {
		return nil, fmt.Errorf("cuda: weight of %d x %d %v needs %d bytes, got %d", rows, cols, typ, rows*rb, len(data))
	}
	t := &tensor{typ: typ, rows: rows, cols: cols, stride: rb, weight: true}
	switch {
	case typ == quant.Q5_0 && b.widen && b.spare(rows*align16(34*cols/32)):
		typ, t.typ, t.stride, t.widened = quant.Q8_0, quant.Q8_0, align16(34*cols/32), true
		data = packWidenQ5(rows, cols, t.stride, data)
	case typ == quant.Q8_0 || typ == quant.Q6_K:
		t.stride = align16(rb)
		data = pack(typ, rows, cols, rb, t.stride, data)
	}
	t.size = rows * t.stride
	b.flush()
	if t.ptr, err = b.alloc(t.size); err != nil {
		return nil, fmt.Errorf("cuda: weight of %d x %d %v: %w", rows, cols, typ, err)
	}
	if err := b.h.htod(t.ptr, unsafe.Pointer(&data[0]), len(data)); err != nil {
		b.Free(t)
		return nil, fmt.Errorf("cuda: uploading a weight of %d x %d %v: %w", rows, cols, typ, err)
	}
	return t, nil
}

// canMultiply reports whether the kernels take weights of type typ.
func canMultiply(typ quant.Type) bool {
	switch typ {
	case quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K:
		return true
	}
	return false
}

// New implements backend.Backend for F32, F16 and I32; the memory is zeroed.
func (b *Backend) New(typ quant.Type, rows, cols int) (backend.Tensor, error) {
	if rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("cuda: new tensor of %d x %d", rows, cols)
	}
	t := &tensor{typ: typ, rows: rows, cols: cols}
	switch typ {
	case quant.F32, quant.I32:
		t.stride = 4 * cols
	case quant.F16:
		t.stride = 2 * cols
	default:
		return nil, fmt.Errorf("cuda: new %v tensor: %w", typ, backend.ErrUnsupported)
	}
	t.size = rows * t.stride
	b.flush() // the zeroing must follow queued work that may still use a pooled buffer
	p, err := b.alloc(t.size)
	if err != nil {
		return nil, fmt.Errorf("cuda: new %v tensor of %d x %d: %w", typ, rows, cols, err)
	}
	t.ptr = p
	return t, nil
}

// View implements backend.Backend.
func (b *Backend) View(bt backend.Tensor, row0, n int) backend.Tensor {
	t := get(bt)
	if row0 < 0 || n <= 0 || row0+n > t.rows {
		panic(fmt.Sprintf("cuda: view of rows [%d,%d) of a %d-row tensor", row0, row0+n, t.rows))
	}
	return &tensor{typ: t.typ, rows: n, cols: t.cols, stride: t.stride, ptr: t.ptr + uint64(row0*t.stride), view: true,
		ofWeight: t.weight || t.ofWeight}
}

// Free implements backend.Backend; the memory goes back to the backend's pool.
func (b *Backend) Free(bt backend.Tensor) {
	t := get(bt)
	if t.view {
		panic("cuda: Free of a view")
	}
	t.freed = true
	if b.closed {
		return
	}
	for _, p := range []uint64{t.ptr, t.f16, t.mfp.ptr, t.mgp.ptr, t.q5p.ptr} {
		if n, ok := b.live[p]; ok {
			delete(b.live, p)
			b.pool[n] = append(b.pool[n], p)
		}
	}
	b.forgetCopies(t)
}

// WriteF32 implements backend.Backend.
func (b *Backend) WriteF32(dst backend.Tensor, src []float32) {
	t := want(dst, quant.F32)
	if len(src) != t.rows*t.cols {
		panic(fmt.Sprintf("cuda: WriteF32 of %d values into %d", len(src), t.rows*t.cols))
	}
	b.write(t.ptr, unsafe.Pointer(&src[0]), 4*len(src))
}

// WriteI32 implements backend.Backend.
func (b *Backend) WriteI32(dst backend.Tensor, src []int32) {
	t := want(dst, quant.I32)
	if len(src) != t.rows*t.cols {
		panic(fmt.Sprintf("cuda: WriteI32 of %d values into %d", len(src), t.rows*t.cols))
	}
	b.write(t.ptr, unsafe.Pointer(&src[0]), 4*len(src))
}

// ReadF32 implements backend.Backend.
func (b *Backend) ReadF32(ctx context.Context, src backend.Tensor, dst []float32) error {
	t := want(src, quant.F32)
	if len(dst) != t.rows*t.cols {
		return fmt.Errorf("cuda: ReadF32 of %d values into %d", t.rows*t.cols, len(dst))
	}
	return b.read(ctx, t.ptr, bytesOf(dst))
}

// Sync implements backend.Backend.
func (b *Backend) Sync(ctx context.Context) error {
	b.flush()
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.err != nil {
		return b.err
	}
	t0 := time.Now()
	r := b.h.sync()
	b.st.tSync += time.Since(t0)
	if r != 0 {
		b.fail(fmt.Errorf("%w (after kernel %s)", cuErr("cuCtxSynchronize", "", r), b.last))
		return b.err
	}
	b.stage.off = 0 // every queued copy from the stage is done
	b.sinceSync = 0
	if b.st.on {
		b.st.clock.settle()
	}
	return nil
}

// Close implements backend.Backend: it frees all device memory and the modules.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.flush()
	b.closed = true
	if b.prof != nil {
		b.prof.report(os.Stderr)
	}
	if b.st.on {
		b.st.report(os.Stderr, b.lt.products, b.lt.paired)
	}
	var errs []error
	if r := b.h.sync(); r != 0 {
		errs = append(errs, cuErr("cuCtxSynchronize", "", r))
	}
	b.st.clock.close(b.h.ctx)
	// Graphs may hold cuBLASLt's kernels: destroyed before the library is closed.
	errs = append(errs, b.destroyGraphs(), b.closeCapture(), b.closeLt())
	for p := range b.live {
		errs = append(errs, b.h.free(p))
	}
	for _, l := range b.pool {
		for _, p := range l {
			errs = append(errs, b.h.free(p))
		}
	}
	for _, p := range b.scratches {
		errs = append(errs, b.h.free(p))
	}
	errs = append(errs, b.freeStage(), b.closeFeed())
	for _, m := range b.modules {
		errs = append(errs, b.h.unload(m))
	}
	b.live, b.pool, b.modules = nil, nil, nil
	errs = append(errs, b.h.release())
	return errors.Join(errs...)
}

func get(bt backend.Tensor) *tensor {
	t, ok := bt.(*tensor)
	if !ok {
		panic(fmt.Sprintf("cuda: tensor %T is not from this backend", bt))
	}
	if t.freed {
		panic("cuda: use of a freed tensor")
	}
	return t
}

func want(bt backend.Tensor, typ quant.Type) *tensor {
	t := get(bt)
	if t.typ != typ {
		panic(fmt.Sprintf("cuda: tensor is %v, want %v", t.typ, typ))
	}
	return t
}

// Parameter slots.
func i64(v int) uint64     { return uint64(int64(v)) }
func f32(v float32) uint64 { return uint64(*(*uint32)(unsafe.Pointer(&v))) }
func ptr(t *tensor) uint64 {
	if t == nil {
		return 0
	}
	return t.ptr
}
