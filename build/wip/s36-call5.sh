#!/bin/sh
# s36-call5.sh: the session's end state. Tests on the committed PTX: TestFeeder,
# TestArgMax, TestPTXMatchesSources, TestKernelNamesExist and TestConformance
# (cuda.test), the CUDA goldens and TestFedDecodeCUDA (archs.test). Then the issues'
# figures, steps ahead of the host (the default) and -sync: 8B Q4_K_M pp512 and tg128,
# Q8_0 tg128, V2-Lite pp512 and tg128 (medians of 3), one stream and 64 streams of
# 512 + 128 for 8B and V2-Lite. bin/dev built with TESTS="cuda archs". ~7 minutes.
set -u
export MODELS="q4 q8 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s36c5}"
# b prints every row's test and tok/s of a bench table.
b() { timeout -s KILL 150 "$@" 2>&1 | grep -E '^\| [a-z0-9]+\.gguf' | cut -d'|' -f7,8 | tr -s ' ' | tr '\n' ';'; }
tgroup 0 'TestFeeder|TestArgMax|TestPTXMatchesSources|TestKernelNamesExist' 120
tgroup 1 '^TestConformance$' 200
(cd inference/model/archs && timeout -s KILL 250 "$R/bin/dev/archs.test" -test.v -test.run 'TestGoldensCUDA$|TestFedDecodeCUDA' 2>&1 | grep -E '^(--- |ok|FAIL|PASS)' | tail -6) &
wait
el tests done
el "8B Q4_K_M: $(b "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/q4.gguf)"
el "8B Q4_K_M -sync: $(b "$E" bench -backend cuda -p 0 -n 128 -r 3 -sync -m /tmp/q4.gguf)"
el "8B Q8_0: $(b "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q8.gguf)"
el "8B Q8_0 -sync: $(b "$E" bench -backend cuda -p 0 -n 128 -r 3 -sync -m /tmp/q8.gguf)"
el "V2-Lite: $(b "$E" bench -backend cuda -p 512 -n 128 -r 3 -m /tmp/v2.gguf)"
el "V2-Lite -sync: $(b "$E" bench -backend cuda -p 0 -n 128 -r 3 -sync -m /tmp/v2.gguf)"
el "8B Q4_K_M again: $(b "$E" bench -backend cuda -p 0 -n 128 -r 3 -m /tmp/q4.gguf)"
for m in q4 v2; do
	el "$m 1 stream: $(s "$E" bench -m /tmp/$m.gguf -backend cuda -streams 1 -p 512 -n 128) (-sync $(s "$E" bench -m /tmp/$m.gguf -backend cuda -streams 1 -p 512 -n 128 -sync))"
	el "$m 64 streams: $(s "$E" bench -m /tmp/$m.gguf -backend cuda -streams 64 -p 512 -n 128)"
done
