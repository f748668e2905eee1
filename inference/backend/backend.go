// Package backend defines what a compute backend offers the models: tensors that live in the
// backend's memory, and a small set of ops that are enqueued in order and return at once.
// The host waits only where it reads results (ReadF32) or calls Sync.
//
// The numeric meaning of every op is fixed here and implemented plainly by package ref;
// faster backends (cpu, cuda, metal) are tested against ref by package backendtest.
package backend

import (
	"context"
	"errors"
	"fmt"
	"math"

	"ember/inference/quant"
	"ember/inference/sample"
)

// Tensor is a 2-D array in backend memory: Rows() rows of Cols() elements of Type(), rows
// contiguous. Weights keep their quantized GGUF type; activations are F32, token ids and
// positions I32, the KV cache F16. A 1-D vector is one row.
type Tensor interface {
	Type() quant.Type
	Rows() int
	Cols() int
}

// ErrUnsupported is returned when a backend cannot hold or compute with a tensor type.
var ErrUnsupported = errors.New("backend: unsupported")

// Backend is one compute device with its memory and an in-order op stream.
//
// Ops check shapes and types and panic on a mismatch: shapes are fixed by the model code
// after the weights' shapes were validated, so a mismatch is a programming error. Device
// failures (a failed launch, a lost device) surface from the next Sync or ReadF32.
type Backend interface {
	// Name is "ref", "cpu", "cuda" or "metal".
	Name() string

	// Weight makes a tensor of rows x cols elements of type t from raw bytes in t's block
	// layout, e.g. a slice of a mmapped GGUF file. Host backends may keep a reference to
	// data instead of copying, so data must stay valid and unmodified until Close.
	Weight(t quant.Type, rows, cols int, data []byte) (Tensor, error)
	// New allocates a zeroed tensor of rows x cols elements (F32, F16 or I32; Q8_0 for a
	// quantized KV cache where the backend holds one, else an error wrapping
	// ErrUnsupported).
	New(t quant.Type, rows, cols int) (Tensor, error)
	// View is rows [row0, row0+n) of t, sharing its memory.
	View(t Tensor, row0, n int) Tensor
	// Free releases a tensor made by New or Weight (not a view). Using it afterwards is an error.
	Free(t Tensor)

	// WriteF32 copies src into an F32 tensor of exactly len(src) elements; WriteI32 the same
	// for I32. The copy is taken before they return, so src may be reused at once.
	WriteF32(dst Tensor, src []float32)
	WriteI32(dst Tensor, src []int32)
	// ReadF32 waits for all enqueued work, then copies an F32 tensor into dst (len(dst) ==
	// Rows*Cols).
	ReadF32(ctx context.Context, src Tensor, dst []float32) error
	// Sync waits for all enqueued work and reports any device failure.
	Sync(ctx context.Context) error
	// Close frees everything the backend holds.
	Close() error

	Ops
}

// Ops is the small op set the architectures are written in. dst comes first; unless said
// otherwise dst and the inputs are F32 with equal shapes, and dst may alias an input.
type Ops interface {
	// GetRows: dst[i,:] = dequantize(table[ids[i],:]). ids is I32 with dst.Rows() entries
	// in one row or column; table has any dequantizable type.
	GetRows(dst, table, ids Tensor)
	// RMSNorm: dst[i,:] = x[i,:] / sqrt(mean_j(x[i,j]^2) + eps) * w[j]; w is one F32 row of
	// Cols elements. The mean is accumulated in float64, as llama.cpp does.
	RMSNorm(dst, x, w Tensor, eps float32)
	// MatMul: dst[i,r] = dot(w[r,:], round(x[i,:])) for x [n, K], w [M, K], dst [n, M].
	// round() converts the activation row to w's dot partner (quant.Type.VecDotType):
	// Q8_0 blocks for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1, Q8_K for K-quants, F16 for F16,
	// BF16 for BF16; F32 weights see x as is. This is llama.cpp's semantics.
	MatMul(dst, w, x Tensor)
	// Add: dst = a + b, where b has a's rows or is one row broadcast over them.
	Add(dst, a, b Tensor)
	// Mul: dst = a * b elementwise, b as for Add.
	Mul(dst, a, b Tensor)
	// SwiGLU: dst = silu(gate) * up, silu(x) = x / (1 + exp(-x)).
	SwiGLU(dst, gate, up Tensor)
	// RoPE rotates, in place, the first p.Dims dims of every head of x [n, heads*p.HeadDim];
	// pos is I32 with n entries.
	RoPE(x, pos Tensor, p RoPE)
	// SetRows: dst[rows[i],:] = convert(src[i,:]); dst is F32, or F16 or Q8_0 (the KV
	// cache; Q8_0 rows are rounded as llama.cpp's quantize_row_q8_0), rows I32.
	SetRows(dst, src, rows Tensor)
	// Attention: for each query row i at position pos[i] and each head h, softmax-weighted
	// sum of V over positions 0..pos[i] of row i's sequence (causal). q [n,
	// NHead*HeadDim] F32; k [rows, NKVHead*HeadDim] and v [rows, NKVHead*VHeadDim] are
	// the cache, both F16 or (backends that hold them) both Q8_0; dst [n, NHead*VHeadDim]
	// F32. Where position t lives in k and v is given by p (Attention.Row): cache row t
	// when p.Table is nil, else through the sequence's block table. Query head h reads KV
	// head h/(NHead/NKVHead). As in llama.cpp, q is rounded to the cache's dot partner
	// before q·k (F16; Q8_0 blocks for a Q8_0 cache), scores are scaled by p.Scale, and
	// for an F16 cache the probabilities are rounded to F16 before they weight V (a Q8_0
	// cache's dequantized V rows are weighted in f32, as llama.cpp's flash attention
	// does). dst must not alias q, k or v.
	Attention(dst, q, k, v, pos Tensor, p Attention)
}

// Proj is one projection of a shared input: Dst = MatMul(W, x).
type Proj struct{ Dst, W Tensor }

// SharedMatMuler is an optional fused op: several projections of the same input (Q, K
// and V; gate and up) computed together, so x is rounded once and the workers meet once.
// The result equals calling MatMul for each Proj. Use MatMulShared, which falls back.
type SharedMatMuler interface {
	MatMulShared(x Tensor, projs []Proj)
}

// MatMulShared computes every projection of x, fused when be supports it.
func MatMulShared(be Backend, x Tensor, projs []Proj) {
	if f, ok := be.(SharedMatMuler); ok {
		f.MatMulShared(x, projs)
		return
	}
	for _, p := range projs {
		be.MatMul(p.Dst, p.W, x)
	}
}

// Brancher is an optional scheduling hint of backends that queue ops for a device:
// Beside queues side's ops, then main's, with the results of calling side() and then
// main(), and may run side's ops at the same time as main's (as a branch of a recorded
// step). side's ops must neither read nor write what main's ops write, nor write what
// they read; the ops after Beside may read both's outputs. n is the rows of the
// activations the ops take. Use Beside, which falls back.
type Brancher interface {
	Beside(n int, side, main func())
}

// Beside runs side's ops and then main's, as a branch when be supports it.
func Beside(be Backend, n int, side, main func()) {
	if br, ok := be.(Brancher); ok {
		br.Beside(n, side, main)
		return
	}
	side()
	main()
}

// Group is one product of a grouped MatMul: Dst = MatMul(W, rows [Row0, Row0+Dst.Rows())
// of the shared input).
type Group struct {
	Dst, W Tensor
	Row0   int
}

// GroupMatMuler is an optional fused op: independent products of row ranges of one input
// by different weights (a mixture of experts' experts, per-head projections) run as one
// op, so the input is rounded once and the workers meet once, not once per product. The
// result equals calling MatMul for each Group on its view of x.
type GroupMatMuler interface {
	MatMulGroups(x Tensor, groups []Group)
}

// MatMulGroups computes every group's product, fused when be supports it.
func MatMulGroups(be Backend, x Tensor, groups []Group) {
	if f, ok := be.(GroupMatMuler); ok {
		f.MatMulGroups(x, groups)
		return
	}
	for _, g := range groups {
		be.MatMul(g.Dst, g.W, be.View(x, g.Row0, g.Dst.Rows()))
	}
}

// RowCopier is an optional op of host backends: whole rows of a raw-stored tensor (a
// quantized KV cache: Q8_0) as the bytes it holds them in, read and written in order,
// so that its blocks go to disk and back without a round trip through F32.
type RowCopier interface {
	ReadRows(ctx context.Context, t Tensor, row0, n int) ([]byte, error)
	WriteRows(t Tensor, row0 int, data []byte) error
}

// Reshaper is an optional op: a view of an F32 or I32 tensor's elements, in the same order, as
// rows x cols (rows*cols must equal its element count). It lets a model change how it
// groups values (head-major to token-major rows, say) without copying.
type Reshaper interface {
	Reshape(t Tensor, rows, cols int) Tensor
}

// ArgMaxer is an optional op for greedy sampling on the backend: the host reads back one
// token id per logits row instead of the whole row (NVocab floats). ArgMax waits for all
// enqueued work, then writes into dst (len(dst) == src.Rows(), else an error) the index
// of each row's largest element of the F32 tensor src, with exactly sample.Greedy's rule:
// NaNs never win and compare with nothing; among the non-NaN elements the largest wins
// (-Inf counts, +0 equals -0), the lowest index on ties; a row of only NaNs gives 0.
type ArgMaxer interface {
	ArgMax(ctx context.Context, src Tensor, dst []int32) error
}

// Feeder is an optional capability for greedy decoding one step ahead of the host: a
// backend that queues work and returns (CUDA) lets the host build step N+1 while the
// device runs step N, when step N+1's token ids need not visit the host first.
// ArgMaxAhead queues the argmax of each row of the F32 tensor src (ArgMaxer's rule) into
// the backend's feed, and the ids' copy to the host, and returns without waiting for the
// device. Fed(n) is the feed as an I32 tensor of n ids (n <= the rows of the last
// ArgMaxAhead): a forward pass queued later takes its token ids from it (model.Batch.Fed),
// after the ops queued before it. The Pending's Wait waits for the ids of its call and
// copies them into dst (len(dst) == src.Rows()); each Pending is waited for once, and at
// most MaxPending may be outstanding (ArgMaxAhead fails past that).
//
// SampleAhead is ArgMaxAhead for sampled rows: row r's id is draws[r].PickRow of the
// row: Pick's from the row's first draws[r].K candidates in TopKer's order (a greedy
// draw, K 0, takes the first), or the row's argmax (ArgMaxer's rule) when the row has no
// candidate, as the host's sampler falls back to sample.Greedy; a Row or Nucleus draw's
// id is its draw from the whole row. A draw with penalties applies them to the row first
// (src's row may be changed), for its Seen tokens and, with SeenFed, for the id the feed holds
// for the row when SampleAhead is called (the last ArgMaxAhead's or SampleAhead's: the
// token the step was fed). The ids are then the ones the host's sampler would draw from
// the same row with the same uniforms. len(draws) == src.Rows(), each K is at most
// MaxTopK, each penalizing at most MaxSeen tokens, a Row draw has a temperature and nothing
// else, and a Nucleus draw a temperature and top-p or min-p, else an error.
type Feeder interface {
	ArgMaxAhead(ctx context.Context, src Tensor) (Pending, error)
	SampleAhead(ctx context.Context, src Tensor, draws []sample.Draw) (Pending, error)
	Fed(n int) Tensor
}

// CheckDraws returns the error SampleAhead gives for draws outside its contract, naming
// the backend, and else the most candidates a draw takes (at least 1).
func CheckDraws(name string, rows int, draws []sample.Draw) (int, error) {
	if len(draws) != rows {
		return 0, fmt.Errorf("%s: SampleAhead of %d rows with %d draws", name, rows, len(draws))
	}
	k := 1
	for _, d := range draws {
		if d.K < 0 || d.K > MaxTopK {
			return 0, fmt.Errorf("%s: SampleAhead draw from %d candidates, outside 0..%d", name, d.K, MaxTopK)
		}
		if d.Row && (d.K != 0 || d.Nucleus || !(d.Temp > 0) || math.IsInf(d.Temp, 1) || d.TopP != 0 || d.MinP != 0) {
			return 0, fmt.Errorf("%s: SampleAhead row draw %+v: want K, TopP and MinP 0 and a finite temperature above 0", name, d)
		}
		if d.Nucleus && (d.K != 0 || !(d.Temp > 0) || math.IsInf(d.Temp, 1) || !(d.TopP > 0 && d.TopP < 1 || d.MinP > 0)) {
			return 0, fmt.Errorf("%s: SampleAhead nucleus draw %+v: want K 0, a finite temperature above 0 and top-p below 1 or min-p above 0", name, d)
		}
		if n := len(d.Seen) + b2i(d.SeenFed); n > MaxSeen {
			return 0, fmt.Errorf("%s: SampleAhead draw penalizing %d tokens, more than %d", name, n, MaxSeen)
		}
		k = max(k, d.K)
	}
	return k, nil
}

// Pending is the ids of one Feeder.ArgMaxAhead or SampleAhead, on their way to the host.
type Pending interface {
	Wait(ctx context.Context, dst []int32) error
}

// MaxPending is how many Feeder.ArgMaxAhead and SampleAhead results may wait at once.
const MaxPending = 4

// MaxTopK is the largest k TopKer.TopK takes.
const MaxTopK = 256

// MaxSeen is the most tokens a SampleAhead draw is penalized for (sample.Draw.Seen and
// the fed one).
const MaxSeen = 1024

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TopKer is an optional op for top-k sampling on the backend: the host reads back k
// candidates per logits row instead of the whole row, and draws from them
// (sample.Sampler.SampleTop). TopK waits for all enqueued work, then writes, for each
// row r of the F32 tensor src, the k first elements of the row under inference/sample's
// candidate order into ids[r*k:(r+1)*k] (their column indices) and vals[r*k:(r+1)*k]
// (their values), in that order: the larger value first, the lower index on ties; NaN
// and -Inf are never candidates; +0 equals -0. A row with fewer than k candidates pads
// its ids with -1 and its vals with -Inf. 1 <= k <= MaxTopK and len(ids) == len(vals)
// == src.Rows()*k, else an error.
type TopKer interface {
	TopK(ctx context.Context, src Tensor, k int, ids []int32, vals []float32) error
}

// CheckTopK returns the error TopK gives for arguments outside its contract, naming the
// backend, or nil.
func CheckTopK(name string, rows, k int, ids []int32, vals []float32) error {
	if k < 1 || k > MaxTopK {
		return fmt.Errorf("%s: TopK with k %d outside 1..%d", name, k, MaxTopK)
	}
	if len(ids) != rows*k || len(vals) != rows*k {
		return fmt.Errorf("%s: TopK %d of %d rows into %d ids and %d values", name, k, rows, len(ids), len(vals))
	}
	return nil
}

// RoPEStyle is how rotated dims are paired.
type RoPEStyle int

const (
	// RoPENormal pairs adjacent dims (2i, 2i+1): llama (GGUF's permuted Q/K).
	RoPENormal RoPEStyle = iota
	// RoPENeoX pairs dim i with i + Dims/2: qwen2 and GPT-NeoX.
	RoPENeoX
)

// RoPE holds the rotary-embedding parameters, with llama.cpp's meanings.
type RoPE struct {
	Style   RoPEStyle
	Dims    int     // rotated dims per head (n_rot), even, <= HeadDim
	HeadDim int     // dims per head
	Base    float32 // freq_base, theta_i = pos * Base^(-2i/Dims)
	// FreqScale multiplies theta (1 / linear scaling factor); 0 means 1.
	FreqScale float32
	// Factors, when not nil, is one F32 row of Dims/2 divisors of theta (rope_freqs, used
	// for llama3-style scaling).
	Factors Tensor
	// YaRN: ExtFactor 0 turns it off. AttnFactor scales cos and sin (0 means 1).
	ExtFactor, AttnFactor, BetaFast, BetaSlow float32
	OrigCtx                                   int
}

// Attention holds the attention parameters.
type Attention struct {
	NHead, NKVHead    int
	HeadDim, VHeadDim int
	Scale             float32 // usually 1/sqrt(HeadDim)

	// The paged KV cache. With Table nil, position t of every query row's sequence is
	// cache row t (one contiguous sequence). Otherwise k and v are blocks of BlockSize
	// rows; Table is I32 [sequences, maxBlocks], row s listing sequence s's blocks in
	// position order (unused entries are ignored); Seq is I32 with one entry per query
	// row, its sequence's row in Table. Several sequences may share blocks (a common
	// prefix); each query row sees only its own sequence.
	Table, Seq Tensor
	BlockSize  int

	// MaxLen, when > 0, is at least pos[i]+1 for every query row: the host's bound on
	// the rows' lengths, by which a backend may pick kernels and size buffers for the
	// positions in use rather than for the whole cache. The result is the same with or
	// without it.
	MaxLen int

	// OneNew, when set, says each query row is the only row of its sequence in the call
	// (decode rows of distinct sequences): the cache rows before a row's position were
	// written before the ops that produced q, k and v, so a backend may read them early.
	// The result is the same with or without it.
	OneNew bool

	// HeadGroups, when > 1, says the rows are HeadGroups runs of n = rows/HeadGroups
	// rows, row h*n+i holding head h of token i (DeepSeek's latent attention with one
	// KV head: NHead and NKVHead 1), and that rows i of every run share a position and
	// a sequence: a backend may read each token's keys once for all its heads. The
	// result is the same without it.
	HeadGroups int
}

// Row is where position t of a sequence lives in the cache: t itself when there is no
// block table, else row t%bs of block table[t/bs]. table is that sequence's row of
// Attention.Table as host memory.
func Row(table []int32, bs int, t int) int {
	if table == nil {
		return t
	}
	return int(table[t/bs])*bs + t%bs
}

// SeqTables checks a paged Attention's block table on the host and returns each query
// row's block table (a row of table): seq is Attention.Seq, table the Attention.Table
// of cols columns, pos the rows' positions, bs the block size and cacheRows the rows of
// k and v. It fails when a sequence index, a block index or a block id is out of range.
func SeqTables(table []int32, cols int, seq, pos []int32, bs, cacheRows int) ([][]int32, error) {
	if bs <= 0 || cols <= 0 || len(table)%cols != 0 || len(seq) != len(pos) {
		return nil, fmt.Errorf("backend: paged attention: block size %d, table of %d x %d, %d sequence indices for %d rows",
			bs, len(table)/max(cols, 1), cols, len(seq), len(pos))
	}
	nseq, nblocks := len(table)/cols, cacheRows/bs
	out := make([][]int32, len(seq))
	for i, s := range seq {
		if s < 0 || int(s) >= nseq {
			return nil, fmt.Errorf("backend: paged attention: row %d: sequence %d of %d", i, s, nseq)
		}
		used := int(pos[i])/bs + 1
		if pos[i] < 0 || used > cols {
			return nil, fmt.Errorf("backend: paged attention: row %d: position %d past a table of %d blocks of %d", i, pos[i], cols, bs)
		}
		t := table[int(s)*cols : (int(s)+1)*cols]
		for j, b := range t[:used] {
			if b < 0 || int(b) >= nblocks {
				return nil, fmt.Errorf("backend: paged attention: sequence %d block %d is %d, cache has %d", s, j, b, nblocks)
			}
		}
		out[i] = t
	}
	return out, nil
}
