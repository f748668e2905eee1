#!/bin/sh
# s39-call3.sh: whole-row draws on the GPU against the build before them (bin/dev/ember-old,
# HEAD 288a254 with this session's bench -temp flag: a temperature-only request's every
# token read its row to the host), 8B
# Q4_K_M, 1, 4 and 16 streams of 16 + 128 tokens at temperature 1, greedy and the app's
# top-k draws beside them; two rounds alternating. bin/dev: ember and ember-old only.
set -u
export MODELS="q4"
. build/gpu-setup.sh "${OUT:-/tmp/s39c3}"
wait
O=$R/bin/dev/ember-old
b() { s "$1" bench -backend cuda -streams $2 -p 16 -n 128 -m /tmp/q4.gguf $3; }
for round in 1 2; do
	for n in 1 4 16; do
		el "$n streams temp1: old $(b $O $n '-temp 1') new $(b $E $n '-temp 1') new-sync $(b $E $n '-temp 1 -sync')"
	done
done
el "1 stream greedy: old $(b $O 1 '-r 1') new $(b $E 1 '-r 1'); app sampling: old $(b $O 1 -sample) new $(b $E 1 -sample)"
el "4 streams greedy: old $(b $O 4 '-r 1') new $(b $E 4 '-r 1')"
