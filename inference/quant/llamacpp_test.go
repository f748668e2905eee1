package quant

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"testing"
)

// testdata/llamacpp_ref.bin.gz holds outputs of llama.cpp's own ggml, written by
// testdata/gen_llamacpp.c linked against the prebuilt libggml-base.so and
// libggml-cpu-x64.so (generic kernels, no FMA) of the npm package
// @node-llama-cpp/linux-x64@3.21.1:
//
//	kind 1: quantize_row_<t>_ref of generated inputs, and dequantize_row_<t> of the result
//	kind 2: ggml_vec_dot_<t>_<vt>_generic (F32/F16/BF16: ggml_vec_dot_<t>) of stored rows
//	kind 3: ggml_fp32_to_fp16/bf16 of sampled float32 bit patterns, and hashes over all
//
// The inputs are not stored: refGen below reproduces the C generator exactly (integer
// PRNG and exact float32 operations only). To refresh the file, build and run the
// generator (see its header) and gzip its output.

// refGen mirrors gen() in gen_llamacpp.c.
type refGen struct{ st uint64 }

func (g *refGen) next64() uint64 {
	g.st += 0x9E3779B97F4A7C15
	z := g.st
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (g *refGen) unif() float32 { return float32(g.next64()>>40) * (1.0 / 16777216.0) }

func (g *refGen) gauss() float32 {
	a := g.unif() + g.unif()
	b := g.unif() + g.unif()
	return ((a + b) - 2) * 1.7320508
}

func refInput(n, dist, bs int, seed uint64) []float32 {
	g := refGen{st: seed}
	x := make([]float32, n)
	for i := range x {
		var v float32
		switch dist {
		case 0:
			v = g.gauss() * 0.02
		case 1:
			v = float32(g.unif()*2) - 1
		case 2:
			v = g.gauss() * 0.02
			if i%97 == 13 {
				v *= 50
			}
		case 3:
			v = g.unif() * 3
		case 4:
			v = g.gauss() - 1.5
		case 5:
			v = g.gauss() * 1e-6
		case 6:
			v = g.gauss() * 3000
		default:
			k, j := (i/bs)%4, i%bs
			gv := g.gauss()
			switch {
			case k == 0:
				v = 0
			case k == 1:
				v = 0.37
			case k == 2 && j == 5:
				v = 100
			case k == 2:
				v = gv * 0.01
			case j%7 == 0:
				v = gv
			}
		}
		x[i] = v
	}
	return x
}

type refReader struct {
	r   *bytes.Reader
	err error
}

func (rr *refReader) u32() uint32 {
	var v uint32
	if rr.err == nil {
		rr.err = binary.Read(rr.r, binary.LittleEndian, &v)
	}
	return v
}

func (rr *refReader) blob() []byte {
	n := rr.u32()
	b := make([]byte, n)
	if rr.err == nil {
		_, rr.err = io.ReadFull(rr.r, b)
	}
	return b
}

func (rr *refReader) f32() float32 { return math.Float32frombits(rr.u32()) }

func (rr *refReader) u64() uint64 { return uint64(rr.u32()) | uint64(rr.u32())<<32 }

func openRef(t *testing.T) *refReader {
	t.Helper()
	raw, err := os.ReadFile("testdata/llamacpp_ref.bin.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("EMBQGOLD")) {
		t.Fatal("bad magic")
	}
	rr := &refReader{r: bytes.NewReader(data[8:])}
	if v := rr.u32(); v != 1 {
		t.Fatalf("version %d", v)
	}
	return rr
}

// firstDiff describes the first differing byte of two block rows.
func firstDiff(t Type, got, want []byte) string {
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			ts := t.TypeSize()
			return fmt.Sprintf("block %d byte %d: got %#02x want %#02x", i/ts, i%ts, got[i], want[i])
		}
	}
	return "lengths differ"
}

// TestMatchesLlamaCpp checks Quantize, Dequantize, Dot, FP32ToFP16 and FP32ToBF16
// bit for bit against llama.cpp's outputs.
func TestMatchesLlamaCpp(t *testing.T) {
	rr := openRef(t)
	counts := map[int]int{}
	for rr.err == nil {
		kind := rr.u32()
		if kind == 0 || rr.err != nil {
			break
		}
		counts[int(kind)]++
		switch kind {
		case 1:
			typ, n, dist, seed := Type(rr.u32()), int(rr.u32()), int(rr.u32()), uint64(rr.u32())
			wantQ, wantD := rr.blob(), rr.blob()
			x := refInput(n, dist, typ.BlockSize(), seed)
			gotQ := make([]byte, len(wantQ))
			if err := Quantize(typ, x, gotQ); err != nil {
				t.Fatal(err)
			}
			if typ == Q8_K {
				// llama.cpp leaves the bsums of an all-zero Q8_K block unwritten.
				for ib := 0; ib < n/QK_K; ib++ {
					if f32At(wantQ, ib*292) == 0 {
						copy(wantQ[ib*292+260:ib*292+292], gotQ[ib*292+260:ib*292+292])
					}
				}
			}
			if !bytes.Equal(gotQ, wantQ) {
				t.Errorf("Quantize %v dist %d n %d: %s", typ, dist, n, firstDiff(typ, gotQ, wantQ))
			}
			if len(wantD) == 0 {
				continue
			}
			gotD := make([]float32, n)
			if err := Dequantize(typ, wantQ, gotD); err != nil {
				t.Fatal(err)
			}
			for i := range gotD {
				w := math.Float32frombits(binary.LittleEndian.Uint32(wantD[4*i:]))
				if math.Float32bits(gotD[i]) != math.Float32bits(w) {
					t.Errorf("Dequantize %v dist %d: element %d = %g, llama.cpp %g", typ, dist, i, gotD[i], w)
					break
				}
			}
		case 2:
			typ, n := Type(rr.u32()), int(rr.u32())
			w, x := rr.blob(), rr.blob()
			want := rr.f32()
			got, err := DotRow(typ, w, x, n)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("Dot %v n %d = %.9g, llama.cpp %.9g", typ, n, got, want)
			}
		case 3:
			cnt := int(rr.u32())
			bad := 0
			for i := 0; i < cnt; i++ {
				v := rr.u32()
				h, g := uint16(v), uint16(v>>16)
				f := math.Float32frombits(uint32(i) * 262139)
				if FP32ToFP16(f) != h || FP32ToBF16(f) != g {
					if bad++; bad < 5 {
						t.Errorf("%#08x: fp16 %#04x (llama.cpp %#04x), bf16 %#04x (llama.cpp %#04x)",
							math.Float32bits(f), FP32ToFP16(f), h, FP32ToBF16(f), g)
					}
				}
			}
			h16, hb16, hw := rr.u64(), rr.u64(), rr.u64()
			if got := hashWiden(); got != hw {
				t.Errorf("FP16ToFP32 over all halves: hash %#x, llama.cpp %#x", got, hw)
			}
			if os.Getenv("QUANT_EXHAUSTIVE") == "" {
				t.Log("set QUANT_EXHAUSTIVE=1 to compare all 2^32 float32 -> fp16/bf16 conversions (~20 s)")
				continue
			}
			g16, gb16 := hashNarrow()
			if g16 != h16 || gb16 != hb16 {
				t.Errorf("all float32: fp16 hash %#x (llama.cpp %#x), bf16 hash %#x (llama.cpp %#x)", g16, h16, gb16, hb16)
			}
		default:
			t.Fatalf("unknown record kind %d", kind)
		}
	}
	if rr.err != nil {
		t.Fatal(rr.err)
	}
	if counts[1] != 12*8 || counts[2] != 10*3+3 || counts[3] != 1 {
		t.Fatalf("record counts %v", counts)
	}
}

func fnvMix(h, v uint64) uint64 {
	h = (h ^ v) * 0x100000001b3
	return h ^ h>>32
}

func hashWiden() uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < 1<<16; i++ {
		h = fnvMix(h, uint64(math.Float32bits(FP16ToFP32(uint16(i)))))
	}
	return h
}

func hashNarrow() (h16, hb16 uint64) {
	h16, hb16 = 0xcbf29ce484222325, 0xcbf29ce484222325
	for i := uint64(0); i < 1<<32; i++ {
		f := math.Float32frombits(uint32(i))
		h16 = fnvMix(h16, uint64(FP32ToFP16(f)))
		hb16 = fnvMix(hb16, uint64(FP32ToBF16(f)))
	}
	return h16, hb16
}
