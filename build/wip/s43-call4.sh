#!/bin/sh
# s43-call4.sh: session 41's skip table (s41-call7.sh) for DeepSeek-V2-Lite again, on
# HEAD after session 42's routing change: the last decode graph's launches by name, then
# tg64 with each name left out in turn (EMBER_CUDA_SKIP "name$": wrong results, the
# chain's timing). bin/dev: HEAD's ember. (Run in session 43 as a copy of s41-call7.sh's
# loop with these two settings; the same steps.)
MODELS=v2 LIMIT=420 OUT="${OUT:-/tmp/s43c4}" exec sh build/wip/s41-call7.sh
