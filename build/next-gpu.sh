#!/bin/sh
# next-gpu.sh: session 20's sixth GPU call, on the final PTX (embedded: made by call 5):
# the fused and attention-choice tests, conformance, the CUDA goldens, then tg128 of 8B
# Q8_0 (call 5's build before: 336.2 / 337.0 / 337.2) and Q4_K_M.
# Carry bin/dev with ember, cuda.test and archs.test; 300 s.
set -u
R=$PWD
for f in bin/dev/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done
chmod +x bin/dev/*
E=$R/bin/dev/ember L=${OUT:-/tmp/next-gpu}
mkdir -p "$L"
[ -f /tmp/q4.gguf ] || $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
[ -f /tmp/q8.gguf ] || $E synth /tmp/q8.gguf -preset llama3.1-8b -ftype q8_0 >/dev/null 2>&1 &
(cd inference/backend/cuda && timeout -s KILL 150 $R/bin/dev/cuda.test -test.run 'TestFusedAttentionQ8K|TestFusedAddRMSNorm|TestFusedSwiGLUQ8$|Conformance$|TestAttentionChoice' -test.v >"$L/tests.log" 2>&1; echo "tests rc $?") &
(cd inference/model/archs && timeout -s KILL 150 $R/bin/dev/archs.test -test.run 'TestGoldensCUDA' >"$L/goldens.log" 2>&1; echo "goldens rc $?") &
wait
grep -E "^--- FAIL|^ok|^PASS|^FAIL|panic" "$L/tests.log" "$L/goldens.log" | head -20
grep -c "^    --- PASS" "$L/tests.log"
b() { timeout -s KILL 40 "$@" 2>&1 | grep '^| ' | tail -1 | cut -d'|' -f8; }
for m in q8 q4 q8; do echo "$m tg128 $(b $E bench -backend cuda -m /tmp/$m.gguf -p 0 -n 128 -r 3)"; done
