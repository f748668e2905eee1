#!/bin/sh
# s46-call2.sh (written in session 45): session 41's skip table (s41-call7.sh) for
# DeepSeek-V2-Lite on the session-45 defaults (Q5_0 widened to Q8_0, so the Q5_0 downs
# and attn_k_b heads run as mmv_id_q8_0 / mmv_idw_q8_0; moe_topk and the routed gate/up
# as one mmv_route_q4_k): the last decode graph's launches by name, then tg64 with each
# name left out in turn (EMBER_CUDA_SKIP "name$": wrong results, the chain's timing).
# Skipping mmv_route_q4_k leaves the ids and gate/up outputs as they were (NOTES,
# session 44's caution). bin/dev: HEAD's ember (TESTS="cuda engine" as s41-call7.sh
# says, or any: only ember runs). ~7 minutes.
MODELS=v2 LIMIT=420 OUT="${OUT:-/tmp/s46c2}" exec sh build/wip/s41-call7.sh
