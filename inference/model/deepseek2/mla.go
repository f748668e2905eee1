package deepseek2

import (
	"encoding/binary"
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/model"
	"ember/inference/quant"
)

// attnWeights are one layer's attention projections.
type attnWeights struct {
	qA, qANorm backend.Tensor // attn_q_a {NEmbd, q_lora_rank} and its norm, when q_lora_rank > 0
	// q is attn_q (or attn_q_b): NHead*(nope+rope) rows, per head nope then rope rows;
	// in the attn_kv_b layout its rows are reordered to rope then nope, as the cache's
	// keys are (RoPE rotates the first dims of a head); split for a backend that
	// branches, every head's nope rows then every head's rope rows (qNopeAll).
	q        backend.Tensor
	kvA, kPE backend.Tensor // views of attn_kv_a_mqa: the kv_lora_rank latent rows, the rope rows
	kvANorm  backend.Tensor // attn_kv_a_norm {kv_lora_rank}
	out      backend.Tensor // attn_output {NHead*vd, NEmbd}

	// MLA ("split") layout: per-head views of attn_q, attn_k_b [rope zero rows and
	// kv_lora_rank rows x nope] and attn_v_b [vd rows x kv_lora_rank].
	qNope, qPE, kB, vB []backend.Tensor
	// kBLat: per-head views of attn_k_b as stored (kv_lora_rank rows x nope, no zero
	// rows), for a decode step whose absorbed query writes only the latent dims (the
	// rope dims written beside it: attnMLA).
	kBLat []backend.Tensor
	// qNopeAll, qPEAll: on a backend that branches (backend.Brancher), attn_q's rows
	// gathered as every head's nope rows, then every head's rope rows (a.q holds them
	// so; qNope and qPE are its views): a decode step's two query products, one on
	// each run of a branch (attnMLA). nil elsewhere.
	qNopeAll, qPEAll backend.Tensor
	// attn_kv_b layout: its key rows as [NHead*(rope+nope), kv_lora_rank] with zero rows
	// where the rope dims go, and its value rows [NHead*vd, kv_lora_rank].
	kNope, v backend.Tensor

	projs  []backend.Proj  // reused, so a decode step allocates less
	groups []backend.Group // reused likewise
}

// bindAttn binds layer name's attention weights.
func (m *Model) bindAttn(l *model.Loader, name func(string) string) attnWeights {
	p, c, be := m.p, m.cfg, m.be
	H, qk := p.NHead, c.nope+c.rope
	var a attnWeights
	qIn, qName := p.NEmbd, name("attn_q.weight")
	if c.qLoRA > 0 {
		a.qA = l.Matrix(name("attn_q_a.weight"), p.NEmbd, c.qLoRA)
		a.qANorm = l.Vector(name("attn_q_a_norm.weight"), c.qLoRA)
		qIn, qName = c.qLoRA, name("attn_q_b.weight")
	}
	kvA := l.Matrix(name("attn_kv_a_mqa.weight"), p.NEmbd, c.kvLoRA+c.rope)
	a.kvANorm = l.Vector(name("attn_kv_a_norm.weight"), c.kvLoRA)
	a.out = l.Matrix(name("attn_output.weight"), H*c.vd, p.NEmbd)
	if c.mla {
		_, brancher := be.(backend.Brancher)
		split := brancher && c.qLoRA == 0 // the query products of a decode step, split (attnMLA)
		if split {
			a.q = queryByParts(l, qName, qIn, H, c.nope, c.rope)
		} else {
			a.q = l.Matrix(qName, qIn, H*qk)
		}
		// attn_k_b with rope zero rows before each head's kv_lora_rank rows, so the
		// absorbed query comes out as a [rope | latent] row whose rope dims are 0.
		kbName := name("attn_k_b.weight")
		t, raw := l.Raw(kbName, c.nope, c.kvLoRA, H)
		var idx []int
		for h := 0; h < H; h++ {
			for j := 0; j < c.rope+c.kvLoRA; j++ {
				idx = append(idx, h*c.kvLoRA+j-c.rope)
				if j < c.rope {
					idx[len(idx)-1] = -1
				}
			}
		}
		var kB backend.Tensor
		if raw != nil {
			kB = l.Bytes(kbName, t, H*(c.rope+c.kvLoRA), c.nope, gather(raw, rowBytes(t, c.nope), idx))
		}
		vB := l.Stack(name("attn_v_b.weight"), c.kvLoRA, c.vd, H)
		kBLat := l.Stack(kbName, c.nope, c.kvLoRA, H)
		if l.Err() == nil {
			if split {
				a.qNopeAll, a.qPEAll = be.View(a.q, 0, H*c.nope), be.View(a.q, H*c.nope, H*c.rope)
			}
			for h := 0; h < H; h++ {
				if split {
					a.qNope = append(a.qNope, be.View(a.q, h*c.nope, c.nope))
					a.qPE = append(a.qPE, be.View(a.q, H*c.nope+h*c.rope, c.rope))
				} else {
					a.qNope = append(a.qNope, be.View(a.q, h*qk, c.nope))
					a.qPE = append(a.qPE, be.View(a.q, h*qk+c.nope, c.rope))
				}
				a.kB = append(a.kB, be.View(kB, h*(c.rope+c.kvLoRA), c.rope+c.kvLoRA))
				a.kBLat = append(a.kBLat, be.View(kBLat, h*c.kvLoRA, c.kvLoRA))
				a.vB = append(a.vB, be.View(vB, h*c.vd, c.vd))
			}
		}
	} else {
		t, raw := l.Raw(qName, qIn, H*qk)
		var idx []int
		for h := 0; h < H; h++ {
			for j := 0; j < qk; j++ { // rope rows first, then nope rows
				idx = append(idx, h*qk+(j+c.nope)%qk)
			}
		}
		if raw != nil {
			a.q = l.Bytes(qName, t, H*qk, qIn, gather(raw, rowBytes(t, qIn), idx))
		}
		kvbName := name("attn_kv_b.weight")
		t, raw = l.Raw(kvbName, c.kvLoRA, H*(c.nope+c.vd))
		var kIdx, vIdx []int
		for h := 0; h < H; h++ {
			base := h * (c.nope + c.vd) // per head: nope key rows, then vd value rows
			for j := 0; j < qk; j++ {
				if j < c.rope {
					kIdx = append(kIdx, -1)
				} else {
					kIdx = append(kIdx, base+j-c.rope)
				}
			}
			for j := 0; j < c.vd; j++ {
				vIdx = append(vIdx, base+c.nope+j)
			}
		}
		if raw != nil {
			rb := rowBytes(t, c.kvLoRA)
			a.kNope = l.Bytes(kvbName, t, H*qk, c.kvLoRA, gather(raw, rb, kIdx))
			a.v = l.Bytes(kvbName, t, H*c.vd, c.kvLoRA, gather(raw, rb, vIdx))
		}
	}
	if l.Err() == nil {
		a.kvA, a.kPE = be.View(kvA, 0, c.kvLoRA), be.View(kvA, c.kvLoRA, c.rope)
	}
	return a
}

// selection builds an F32 rows x cols matrix with a 1 at (r, col(r)) where col(r) >= 0
// and zeros elsewhere: MatMul by it places input columns at output columns exactly
// (every output is one input times 1 plus zeros).
func selection(l *model.Loader, name string, rows, cols int, col func(r int) int) backend.Tensor {
	data := make([]byte, rows*cols*4)
	one := math.Float32bits(1)
	for r := 0; r < rows; r++ {
		if c := col(r); c >= 0 && c < cols {
			binary.LittleEndian.PutUint32(data[(r*cols+c)*4:], one)
		}
	}
	return l.Bytes(name, quant.F32, rows, cols, data)
}

// bindPlacements makes the selections that assemble key and query rows and the
// per-head attention outputs.
func (m *Model) bindPlacements(l *model.Loader) {
	p, c := m.p, m.cfg
	hd := p.HeadDim // key dims per KV head: rope first
	// k_pe (rope) into every KV head's first rope dims.
	m.placeRope = selection(l, "place_rope", p.NKVHead*hd, c.rope, func(r int) int {
		if r%hd < c.rope {
			return r % hd
		}
		return -1
	})
	if !c.mla {
		return
	}
	// A latent row into dims rope.. of a [rope | latent] key or query row.
	m.placeKV = selection(l, "place_kv", c.rope+c.kvLoRA, c.kvLoRA, func(r int) int { return r - c.rope })
	m.dropRope = selection(l, "drop_rope", c.kvLoRA, c.rope+c.kvLoRA, func(r int) int { return r + c.rope })
	// Rows [(H-1-h)*vd, +H*vd) of one sliding selection put head h's vd values at
	// columns h*vd of NHead*vd.
	H := p.NHead
	all := selection(l, "place_v", (2*H-1)*c.vd, c.vd, func(r int) int { return r - (H-1)*c.vd })
	if l.Err() == nil {
		for h := 0; h < H; h++ {
			m.placeV = append(m.placeV, m.be.View(all, (H-1-h)*c.vd, H*c.vd))
		}
	}
}

// headInputs are the MLA path's per-(head, token) query rows: head-major, row h*n+i is
// head h of token i, each attending alone over the shared latent cache.
type headInputs struct {
	pos  backend.Tensor // I32 [NHead*n]
	attn backend.Attention
	// With a backend.Reshaper, rows seen as chunks of chunk values: latRows picks the
	// latent chunks of the attention output rows; kvRows and ropeRows place the latent
	// and the rope key in the key rows, qRopeRows q_pe in the query rows; tokRows orders
	// head-major rows token-major.
	chunk                                         int
	latRows, tokRows, kvRows, ropeRows, qRopeRows backend.Tensor
}

func (m *Model) headInputs(b model.Batch, in *model.In) *headInputs {
	n, H, c := in.N, m.p.NHead, m.cfg
	rep := func(name string, v []int32) backend.Tensor {
		all := make([]int32, 0, n*H)
		for h := 0; h < H; h++ {
			all = append(all, v...)
		}
		return m.heads.WriteKept(name, n*H, all)
	}
	hi := &headInputs{pos: rep("pos_h", b.Pos), attn: in.Attn}
	if b.Tables != nil {
		hi.attn.Seq = rep("seq_h", b.Seq)
	}
	if rs, ok := m.be.(backend.Reshaper); ok {
		ch := gcd(c.rope, c.kvLoRA)
		per, skip := (c.rope+c.kvLoRA)/ch, c.rope/ch
		hi.chunk = ch
		// chunks [skip, per) (the latent) of each of rows rows, or [0, skip) (rope)
		place := func(name string, rows int, latent bool) backend.Tensor {
			a, z := 0, skip
			if latent {
				a, z = skip, per
			}
			ids := make([]int32, 0, rows*(z-a))
			for r := 0; r < rows; r++ {
				for j := a; j < z; j++ {
					ids = append(ids, int32(r*per+j))
				}
			}
			return rs.Reshape(m.heads.WriteKept(name, rows, ids), len(ids), 1)
		}
		hi.latRows, hi.qRopeRows = place("lat_rows", n*H, true), place("qrope_rows", n*H, false)
		hi.kvRows, hi.ropeRows = place("kv_rows", n, true), place("rope_rows", n, false)
		tok := make([]int32, 0, n*H)
		for i := 0; i < n; i++ {
			for h := 0; h < H; h++ {
				tok = append(tok, int32(h*n+i))
			}
		}
		hi.tokRows = m.heads.WriteKept("tok_rows", n*H, tok)
	}
	hi.attn.NHead, hi.attn.NKVHead = 1, 1
	hi.attn.HeadGroups = H                                               // rows h*n+i: every head of token i reads its keys
	hi.attn.HeadDim, hi.attn.VHeadDim = c.rope+c.kvLoRA, c.rope+c.kvLoRA // V is K
	hi.attn.Scale = c.kqScale
	return hi
}

// latent computes the compressed kv (not yet normed: attn_kv_a_norm is the caller's)
// and the rope key of cur into kv_cmpr and k_pe, together with extra projections of
// cur, and returns the query input (cur, or its normed q_a compression).
func (m *Model) latent(w *attnWeights, cur backend.Tensor, n int, extra []backend.Proj) (kv, kpe, x backend.Tensor) {
	be, s, p := m.be, m.scratch, m.p
	kv, kpe = s.Get("kv_cmpr", n), s.Get("k_pe", n)
	w.projs = append(append(w.projs[:0], backend.Proj{Dst: kv, W: w.kvA}, backend.Proj{Dst: kpe, W: w.kPE}), extra...)
	x = cur
	if m.cfg.qLoRA > 0 {
		x = s.Get("q_a", n)
		w.projs = append(w.projs, backend.Proj{Dst: x, W: w.qA})
	}
	backend.MatMulShared(be, cur, w.projs)
	if m.cfg.qLoRA > 0 {
		be.RMSNorm(x, x, w.qANorm, p.RMSEps)
	}
	return kv, kpe, x
}

// latentWriter is the optional op of a backend that writes the tokens' latent key rows
// [RoPE(k_pe) | RMSNorm(kv) * norm] into an MLA cache (rows slots) in one step, as
// attnMLA's RMSNorm, placements, RoPE and SetRows would (cuda: one launch for five). It
// reports false, having done nothing, for a case it does not take.
type latentWriter interface {
	LatentKV(cache, kv, kpe, norm backend.Tensor, eps float32, pos, slots backend.Tensor, r backend.RoPE) bool
}

// latentAttender is the optional op of a backend that writes MLA attention's output
// rows without their first skip dims (the rope dims): what Attention and the gather of
// the latent dims give, in one step (cuda: one launch, attn_v_b's rounding joining it).
// It reports false, having done nothing, for a case it does not take.
type latentAttender interface {
	AttentionLatent(dst, q, k, v, pos backend.Tensor, a backend.Attention, skip int) bool
}

// attnMLA is llama.cpp's MLA attention with the key up-projection absorbed: cur [n,
// NEmbd] becomes the attention output in place.
func (m *Model) attnMLA(w *attnWeights, kCache, vCache, cur backend.Tensor, in *model.In, hi *headInputs) {
	be, s, hs, p := m.be, m.scratch, m.heads, m.p
	n, H := in.N, p.NHead
	view := func(t backend.Tensor, h int) backend.Tensor { return be.View(t, h*n, n) }
	// Per head: q_nope, q_pe (from cur, or the normed q_a compression).
	qNope, qPE, qh, qt := hs.Get("q_nope", n*H), hs.Get("q_pe", n*H), hs.Get("Qh", n*H), hs.Get("Qtmp", n*H)
	projs := make([]backend.Proj, 0, 2*H)
	for h := 0; h < H; h++ {
		projs = append(projs, backend.Proj{Dst: view(qNope, h), W: w.qNope[h]}, backend.Proj{Dst: view(qPE, h), W: w.qPE[h]})
	}
	// A decode step's head projections of cur go with the latent ones: one rounding of
	// cur for all (a batch's runs are launched per matrix anyway).
	var withLatent []backend.Proj
	if m.cfg.qLoRA == 0 && n == 1 {
		withLatent = projs
	}
	rs, reshape := be.(backend.Reshaper)
	// In a decode step with q_pe already projected (withLatent), q_nope's absorbed
	// product writes only the latent dims of each head's query row (attn_k_b as stored),
	// so q_pe's rotation can write the rope dims beside it, after the cache row's write;
	// otherwise attn_k_b's zero rows write zeros into the rope dims, and the rotation
	// comes after. With the query's rows split (qNopeAll, qPEAll: a backend that
	// branches), the latent projections and q_pe's go on the branch's side and q_nope's
	// on its main run, so neither waits for the other.
	beside := withLatent != nil && reshape && len(w.kBLat) == H
	split := beside && w.qNopeAll != nil
	var kv, kpe, x backend.Tensor
	if !split {
		kv, kpe, x = m.latent(w, cur, n, withLatent)
	}

	// q_pe rotated as its own rows (what rotating the rope dims of the query rows gives),
	// then placed into those dims: a backend may do both in one launch.
	ropeQ := func() {
		ropePE := p.RoPE
		ropePE.HeadDim = m.cfg.rope
		be.RoPE(qPE, hi.pos, ropePE)
		if reshape {
			c, ch := m.cfg, hi.chunk
			be.SetRows(rs.Reshape(qh, n*H*(c.rope+c.kvLoRA)/ch, ch), rs.Reshape(qPE, n*H*c.rope/ch, ch), hi.qRopeRows)
		} else {
			be.MatMul(qt, m.placeRope, qPE)
			be.Add(qh, qh, qt)
		}
	}
	latentDims := func(h int) backend.Tensor { // head h's latent dims of qh (one token)
		c, ch := m.cfg, hi.chunk
		per, skip := (c.rope+c.kvLoRA)/ch, c.rope/ch
		return rs.Reshape(be.View(rs.Reshape(qh, H*per, ch), h*per+skip, per-skip), 1, c.kvLoRA)
	}

	// Kcur = [rope(k_pe) | kv_cmpr normed]: one latent key row per token; the values are
	// the same rows (vCache is kCache), their latent part counting. Only the attention
	// reads the cache row, so a backend may write it beside the query's products.
	backend.Beside(be, n, func() {
		if split {
			kv, kpe, _ = m.latent(w, cur, n, []backend.Proj{{Dst: rs.Reshape(qPE, 1, H*m.cfg.rope), W: w.qPEAll}})
		}
		m.writeLatent(w, kCache, kv, kpe, in, hi)
		if beside {
			ropeQ()
		}
	}, func() {
		// q_nope absorbed into the latent through attn_k_b, straight into the latent dims
		// of the [rope | latent] query row.
		switch {
		case split:
			be.MatMul(rs.Reshape(qNope, 1, H*m.cfg.nope), w.qNopeAll, cur)
		case withLatent == nil:
			backend.MatMulShared(be, x, projs)
		}
		w.groups = w.groups[:0]
		for h := 0; h < H; h++ {
			g := backend.Group{Dst: view(qh, h), W: w.kB[h], Row0: h * n}
			if beside {
				g.Dst, g.W = latentDims(h), w.kBLat[h]
			}
			w.groups = append(w.groups, g)
		}
		backend.MatMulGroups(be, qNope, w.groups)
	})
	if !beside {
		ropeQ()
	}

	kqv, lat := hs.Get("kqv_h", n*H), hs.Get("kqv_lat", n*H)
	if la, ok := be.(latentAttender); !ok || !la.AttentionLatent(lat, qh, kCache, vCache, hi.pos, hi.attn, m.cfg.rope) {
		be.Attention(kqv, qh, kCache, vCache, hi.pos, hi.attn)
		if reshape { // the latent dims, gathered in chunks of the rows seen as narrower rows
			c, ch := m.cfg, hi.chunk
			be.GetRows(rs.Reshape(lat, n*H*c.kvLoRA/ch, ch), rs.Reshape(kqv, n*H*(c.rope+c.kvLoRA)/ch, ch), hi.latRows)
		} else {
			be.MatMul(lat, m.dropRope, kqv) // the probability-weighted latent, without rope dims
		}
	}

	// Decompress each head's latent result through attn_v_b and lay the heads side by
	// side, [n, NHead*vd], for attn_output.
	vh, out := hs.Get("v_h", n*H), s.Get("kqv_out", n)
	w.groups = w.groups[:0]
	for h := 0; h < H; h++ {
		w.groups = append(w.groups, backend.Group{Dst: view(vh, h), W: w.vB[h], Row0: h * n})
	}
	backend.MatMulGroups(be, lat, w.groups)
	switch {
	case reshape && n == 1: // head-major is token-major
		out = rs.Reshape(vh, 1, H*m.cfg.vd)
	case reshape: // rows h*n+i to i*H+h, then each token's H rows as one
		vt := hs.Get("v_tok", n*H)
		be.GetRows(vt, vh, hi.tokRows)
		out = rs.Reshape(vt, n, H*m.cfg.vd)
	default:
		tmp := s.Get("kqv_tmp", n)
		for h := 0; h < H; h++ {
			if h == 0 {
				be.MatMul(out, m.placeV[h], view(vh, h))
				continue
			}
			be.MatMul(tmp, m.placeV[h], view(vh, h))
			be.Add(out, out, tmp)
		}
	}
	be.MatMul(cur, w.out, out)
}

// writeLatent writes the tokens' latent key rows [RoPE(k_pe) | RMSNorm(kv) * norm] into
// the MLA cache kCache (the values are the same rows).
func (m *Model) writeLatent(w *attnWeights, kCache, kv, kpe backend.Tensor, in *model.In, hi *headInputs) {
	be, s, p, n := m.be, m.scratch, m.p, in.N
	if lw, ok := be.(latentWriter); ok && lw.LatentKV(kCache, kv, kpe, w.kvANorm, p.RMSEps, in.Pos, in.Slots, p.RoPE) {
		return
	}
	be.RMSNorm(kv, kv, w.kvANorm, p.RMSEps)
	kcur := s.Get("Kcur", n)
	if rs, ok := be.(backend.Reshaper); ok { // kv and k_pe written into their chunks of Kcur's rows
		c, ch := m.cfg, hi.chunk
		kc := rs.Reshape(kcur, n*(c.rope+c.kvLoRA)/ch, ch)
		be.SetRows(kc, rs.Reshape(kv, n*c.kvLoRA/ch, ch), hi.kvRows)
		be.SetRows(kc, rs.Reshape(kpe, n*c.rope/ch, ch), hi.ropeRows)
	} else {
		ktmp := s.Get("Ktmp", n)
		be.MatMul(kcur, m.placeKV, kv)
		be.MatMul(ktmp, m.placeRope, kpe)
		be.Add(kcur, kcur, ktmp)
	}
	be.RoPE(kcur, in.Pos, p.RoPE)
	be.SetRows(kCache, kcur, in.Slots)
}

// attnKVB is llama.cpp's non-MLA path for files with one attn_kv_b: keys and values
// decompressed per head into the cache, plain multi-head attention.
func (m *Model) attnKVB(w *attnWeights, kCache, vCache, cur backend.Tensor, in *model.In) {
	be, s, p, c := m.be, m.scratch, m.p, m.cfg
	n := in.N
	q := s.Get("Qcur", n)
	var extra []backend.Proj
	if c.qLoRA == 0 {
		extra = []backend.Proj{{Dst: q, W: w.q}}
	}
	kv, kpe, x := m.latent(w, cur, n, extra)
	be.RMSNorm(kv, kv, w.kvANorm, p.RMSEps)
	if c.qLoRA > 0 {
		be.MatMul(q, w.q, x)
	}
	kcur, vcur, ktmp := s.Get("Kcur", n), s.Get("Vcur", n), s.Get("Ktmp", n)
	w.projs = append(w.projs[:0], backend.Proj{Dst: kcur, W: w.kNope}, backend.Proj{Dst: vcur, W: w.v})
	backend.MatMulShared(be, kv, w.projs)
	be.MatMul(ktmp, m.placeRope, kpe) // the shared rope key into every head
	be.Add(kcur, kcur, ktmp)
	be.RoPE(q, in.Pos, p.RoPE)
	be.RoPE(kcur, in.Pos, p.RoPE)
	be.SetRows(kCache, kcur, in.Slots)
	be.SetRows(vCache, vcur, in.Slots)
	kqv := s.Get("kqv", n)
	a := in.Attn
	a.NHead, a.NKVHead, a.HeadDim, a.VHeadDim = p.NHead, p.NKVHead, p.HeadDim, p.VHeadDim
	a.Scale = c.kqScale
	be.Attention(kqv, q, kCache, vCache, in.Pos, a)
	be.MatMul(cur, w.out, kqv)
}

// String describes the attention layout, for errors and logs.
func (c config) String() string {
	layout := "attn_kv_b (MHA)"
	if c.mla {
		layout = "MLA (latent cache)"
	}
	return fmt.Sprintf("%s, q_lora_rank %d, kv_lora_rank %d, qk %d+%d, v %d", layout, c.qLoRA, c.kvLoRA, c.nope, c.rope, c.vd)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
