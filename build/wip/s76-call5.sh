#!/bin/sh
# s76-call5.sh (session 76): the committed tree (ROUTE_STAGE reverted): the new
# TestMoERoutingSmallGrid on the embedded PTX, then timelines of V2-Lite and the 8B (tg64's
# 40th batch, build/timeline-ptx.sh) for where a step goes now. Before: sh
# build/dev-build.sh; hold PTX, vocab, tokenizers out; carry bin/dev.
set -u
export MODELS="q4 v2"
. build/gpu-setup.sh "${OUT:-/tmp/s76c5}"
nvidia-smi --query-gpu=name --format=csv,noheader
tgroup 0 'TestMoERoutingSmallGrid' 150
sh build/timeline-ptx.sh /tmp/tl || el "TL FAILED"
wait
cp /tmp/g0.log "$L/"
tl tl_v2.log v2
tl tl_q4.log q4
el done
