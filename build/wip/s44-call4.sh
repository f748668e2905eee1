#!/bin/sh
# s44-call4.sh (session 44): where EMBER_WEVICT=2's extra ~1% on V2-Lite comes from
# (s44-call3.sh: w2 601.5 / 600.6 against the landed ID-only 594.5 / 597.9, the 8B
# -0.3%). build/wip/wevict-dense.patch (applied in the carried tree) adds mv1's EFX and
# matmul.cu's WEV_ONE (mmv_*_1) and WEV_MULTI (mmv_multi*) knobs, both off by default
# (the committed PTX); variants one and multi turn one on each, against the embedded
# PTX. Carry bin/dev (bin/dev/ember of main only) with testdata/vocab, tokenizers and
# golden moved out.
set -u
MODULES=matmul VARIANTS="one:-DWEV_ONE=true multi:-DWEV_MULTI=true" BENCH="v2 q4" ROUNDS=2 sh build/ptx-variants.sh
