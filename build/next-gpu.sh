#!/bin/sh
# next-gpu.sh: session 24's GPU checks, for the next session's first call. The pre-wait
# copy microbenchmark (build/micro/pre.cu: do cp.async copies issued before the PDL wait
# slow a chain?), the fusion, mat-vec, conformance and graph tests, deepseek2's GPU tests
# and the CUDA goldens; then 8B Q4_K_M pp512 / tg128, 8B Q8_0 tg128, V2-Lite tg128 and
# 8B 64 streams; last, 8B Q8_0 tg128 at Q80_S 5 and 7 (three rows a warp, as now)
# alternating with the default 6, and build/wip/dec-pre1.patch (attention_dec's table
# reads before the PDL wait) against the committed attention_dec.ptx, 8B Q8_0 and
# Q4_K_M tg128 alternating (if it gains: apply it, keep attention_dec.ptx from
# $OUT/dec-pre1/ and the other modules' PTX with their hash lines from there too).
# Carry bin/dev (ember, cuda.test, archs.test, deepseek2.test as .xz: build/dev-build.sh);
# ~10 minutes: split it in two calls if the first runs out (the benchmarks after the
# tests stand alone once the synthetic files and PTX exist). SKIP_TESTS=1 leaves the tests out.
set -u
R=$PWD L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember
$E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
$E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
$E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
if [ -z "${SKIP_TESTS:-}" ]; then
(cd inference/backend/cuda && timeout -s KILL 240 "$R/bin/dev/cuda.test" -test.run 'TestFusedQ8KHalf|TestFusedSwiGLU|TestFusedDecoder|TestMatVec|Conformance$|TestMatMulSharedQ8_0|TestGraphReplay|TestBranch' -test.v >"$L/tests.log" 2>&1; echo "cuda tests rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 240 "$R/bin/dev/deepseek2.test" >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?") &
(cd inference/model/archs && timeout -s KILL 240 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
fi
(cd build/micro && nvcc -arch=sm_90 -std=c++17 -O3 -o /tmp/pre pre.cu; echo "pre built rc $?") &
# Which kernels spill or keep a stack frame under nvcc's ptxas (session 24's lead on the
# losing attention variants): every module's kernels with a nonzero line.
(cd kernels/cuda && for cu in *.cu; do nvcc -arch=sm_90 -O3 -fmad=false -cubin -Xptxas -v -o /dev/null "$cu" 2>&1; done |
	awk "/entry function/ {k=\$0} /stack frame/ && !/^ *0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads/ {print k; print}" >"$L/spills.txt"; echo "spill report rc $?") &
for n in 5 7; do
	d=/tmp/ptx-s$n; mkdir -p $d; cp kernels/cuda/*.ptx $d/
	(cd kernels/cuda && nvcc -arch=sm_90 -ptx -O3 -fmad=false -DQ80_S=$n -o $d/matmul.ptx matmul.cu 2>/dev/null; echo "ptx S=$n rc $?") &
done
# dec-pre1: the patch applied to a copy of kernels/cuda, every module's PTX made there
# with its hash line (common.cuh changes), for EMBER_CUDA_PTX_DIR and to commit.
(P=/tmp/dec-pre1 && rm -rf $P && mkdir -p $P && cp -r kernels/cuda/. $P/ && cd $P && patch -p3 <"$R/build/wip/dec-pre1.patch" >/dev/null &&
	for cu in *.cu; do m=${cu%.cu}; nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/$m.dp.ptx $cu 2>/dev/null &&
		{ echo "// ember-sources-sha256: $(cat $cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1)"; cat /tmp/$m.dp.ptx; } >$m.ptx; done &&
	mkdir -p "$L/dec-pre1" && cp *.ptx "$L/dec-pre1/"; echo "dec-pre1 ptx rc $?") &
wait
/tmp/pre  # alone on the GPU: its timings would share it with the tests above
echo "kernels that spill or keep a stack frame:"; cat "$L/spills.txt"
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -30
b() { timeout -s KILL 120 "$@" 2>&1 | grep '^| ' | tail -2 | cut -d'|' -f7,8 | tr '\n' ' '; }
echo "8B q4_k_m $(b $E bench -backend cuda -m /tmp/q4.gguf -p 512 -n 128 -r 3)"
echo "8B q8_0   $(b $E bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
echo "v2-lite   $(b $E bench -backend cuda -m /tmp/v2.gguf -p 0 -n 128 -r 3)"
s() { timeout -s KILL 120 "$@" >"$L/s.txt" 2>&1; echo "$(grep '^| ' "$L/s.txt" | tail -1 | cut -d'|' -f6) $(grep -o '[0-9]* kernels in [0-9]* batches' "$L/s.txt")"; }
for r in 1 2; do
	echo "8B 64 streams $(EMBER_CUDA_STATS=1 s $E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
q8() { timeout -s KILL 100 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8 | tr -d ' '; }
for r in 1 2; do
	for n in 6 5 7; do
		if [ $n = 6 ]; then echo "8B q8_0 S=6 $(q8 $E bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"
		else echo "8B q8_0 S=$n $(EMBER_CUDA_PTX_DIR=/tmp/ptx-s$n q8 $E bench -backend cuda -m /tmp/q8.gguf -p 0 -n 128 -r 3)"; fi
	done
done
for r in 1 2; do
	for m in q8 q4; do
		echo "8B $m tg128 committed $(q8 $E bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
		echo "8B $m tg128 dec-pre1  $(EMBER_CUDA_PTX_DIR=/tmp/dec-pre1 q8 $E bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"
	done
done
