#!/bin/sh
# The next session's first GPU call, for branch wip/s14-ltgraph (cuBLASLt's products
# queued with the kernels and captured into graphs, ltgraph.go): build (build/dev-build.sh)
# and carry bin/dev, bin/tests (cuda.test.xz, archs.test.xz, deepseek2.test.xz). Checks
# the tests that reach cuBLASLt with graphs on, shows the 64-stream run's graph replays
# (EMBER_CUDA_STATS), and A/Bs against EMBER_CUDA_LT_NO_GRAPHS=1 (products launched
# directly, as on main).
R=$PWD; S=$OUT/summary.txt
for f in bin/*/*.xz; do xz -d -f $f; done; chmod +x bin/*/*
E=$R/bin/dev/ember; T=$R/bin/tests/cuda.test
timeout -s KILL 60 $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m > /dev/null 2>&1 &
timeout -s KILL 60 $E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m > /dev/null 2>&1 &
(cd inference/backend/cuda && timeout -s KILL 200 $T -test.run 'Cublas|F16Copies|TestMMF|TestConformance$|TestFusedDecoderLayers|TestPrefill' -test.skip 'TestCublasOutOfMemoryFallsBack' 2>&1 | grep -E '^(--- FAIL|FAIL|ok|PASS)' | head) >> $S
(cd inference/model/archs && timeout -s KILL 90 $R/bin/tests/archs.test -test.run 'TestGoldensCUDA' 2>&1 | tail -1) >> $S
(cd inference/model/deepseek2 && timeout -s KILL 90 $R/bin/tests/deepseek2.test -test.run 'CUDA' 2>&1 | tail -1) >> $S
wait
echo "stats: $(EMBER_CUDA_STATS=1 timeout -s KILL 100 $E bench -m /tmp/q4.gguf -backend cuda -streams 64 -p 512 -n 128 2>&1 | grep -iE 'graph|direct|flush' | head -5 | tr '\n' ' ')" >> $S
s() { echo "$1 $2 $3: $(env $3 timeout -s KILL 100 $E bench -m /tmp/$1.gguf -backend cuda -streams $2 -p 512 -n 128 2>&1 | grep -E '^\| |rror' | grep -v model | tr '\n' ' ')" >> $S; }
s q4 64 X=1; s q4 64 EMBER_CUDA_LT_NO_GRAPHS=1; s q4 64 X=1; s q4 64 EMBER_CUDA_LT_NO_GRAPHS=1
s v2 64 X=1; s v2 64 EMBER_CUDA_LT_NO_GRAPHS=1
echo "pp: $(timeout -s KILL 60 $E bench -m /tmp/q4.gguf -backend cuda -p 512 -n 128 -r 3 2>&1 | grep -E '^\| ' | grep -v model | tr '\n' ' ')" >> $S
echo "pp no lt graphs: $(EMBER_CUDA_LT_NO_GRAPHS=1 timeout -s KILL 60 $E bench -m /tmp/q4.gguf -backend cuda -p 512 -n 128 -r 3 2>&1 | grep -E '^\| ' | grep -v model | tr '\n' ' ')" >> $S
echo done >> $S
