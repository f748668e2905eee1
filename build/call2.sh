set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/o}
mkdir -p $L
M=/tmp/v2.gguf
[ -f $M ] || $E synth $M -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
(cd inference/backend/cuda && timeout -s KILL 200 "$R/bin/dev/cuda.test" -test.run 'TestBranch|TestGraphReplay|TestFusedAttention|TestCUDALatent' -test.v >$L/tests.log 2>&1; echo "cuda tests rc $?") &
(cd inference/model/deepseek2 && timeout -s KILL 200 "$R/bin/dev/deepseek2.test" -test.v >"$L/ds2.log" 2>&1; echo "deepseek2 tests rc $?") &
(cd inference/model/archs && timeout -s KILL 200 "$R/bin/dev/archs.test" -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L"/*.log | head -20
grep -E "^--- (PASS|FAIL).*Branch" $L/tests.log
b() { o=$(EMBER_CUDA_STATS=1 timeout -s KILL 90 "$@" 2>&1); echo "$(echo "$o" | grep '^| ' | tail -1 | cut -d'|' -f8) $(echo "$o" | grep -o '([0-9]* with branches)' | tail -1)"; }
for r in 1 2 3; do
	echo "branches tg128 $(b $E bench -backend cuda -m $M -p 0 -n 128 -r 3)"
	echo "chain    tg128 $(EMBER_CUDA_NO_BRANCH=1 b $E bench -backend cuda -m $M -p 0 -n 128 -r 3)"
done
timeout 90 $E run -backend cuda -m $M -p "The quick brown fox" -n 48 >"$L/run-branch.txt" 2>/dev/null
EMBER_CUDA_NO_BRANCH=1 timeout 90 $E run -backend cuda -m $M -p "The quick brown fox" -n 48 >"$L/run-chain.txt" 2>/dev/null
cmp "$L/run-branch.txt" "$L/run-chain.txt" && echo "greedy tokens: the same ($(wc -c <$L/run-chain.txt) bytes)"
echo "1 stream 512+128 branches: $(timeout -s KILL 120 $E bench -backend cuda -m $M -streams 1 -p 512 -n 128 2>&1 | grep '^| ' | tail -1)"
echo "1 stream 512+128 chain:    $(EMBER_CUDA_NO_BRANCH=1 timeout -s KILL 120 $E bench -backend cuda -m $M -streams 1 -p 512 -n 128 2>&1 | grep '^| ' | tail -1)"
