#!/bin/sh
# s39-call4.sh: the engine's GPU tests after drawnOnBackend (steps that do not go ahead
# draw whole-row rows on the device too), then 8B Q4_K_M at temperature 1 ahead and with
# -sync (now the device's draws, waited for at once, in place of the rows read to the
# host: 205.5 / 230.1 in call 3), greedy beside it; V2-Lite greedy against temperature 1.
# bin/dev: TESTS="engine" (without testdata/vocab, testdata/tokenizers).
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s39c4}"
(cd inference/engine && timeout -s KILL 200 "$R/bin/dev/engine.test" -test.v -test.run 'CUDA' 2>&1 | grep -E -- '^(--- |ok|FAIL|PASS)|_test.go:[0-9]+: [^0-9]' | tail -14)
wait
el "tests done"
b() { s "$E" bench -backend cuda -streams $1 -p 16 -n 128 -m /tmp/$2.gguf $3; }
for round in 1 2; do
	el "8B 1 stream: temp1 $(b 1 q4 '-temp 1') temp1-sync $(b 1 q4 '-temp 1 -sync') greedy-sync $(b 1 q4 -sync)"
	el "8B 4 streams: temp1 $(b 4 q4 '-temp 1') temp1-sync $(b 4 q4 '-temp 1 -sync') greedy-sync $(b 4 q4 -sync)"
	el "V2-Lite 1 stream: greedy $(b 1 v2 '-r 1') temp1 $(b 1 v2 '-temp 1') temp1-sync $(b 1 v2 '-temp 1 -sync'); 4 streams greedy $(b 4 v2 '-r 1') temp1 $(b 4 v2 '-temp 1')"
done
