#!/bin/sh
# ffn-gpu.sh: build/micro/ffn.cu on the GPU machine (nvcc only, no carry; ~1-2 minutes):
# a layer's gate/up, SwiGLU and down as the engine's three launches against one launch
# whose down product takes each 2,048-value chunk as soon as gate/up's rows for it are
# done; bits checked, 32 layers' FFN halves timed with GAPS ns between them (where a
# layer's attention half runs), down LAGS chunks behind gate/up, its step's weights read
# as they are (DPRES 0) or copied into shared memory while the GU tasks before it run
# (1); then with the next norm after each FFN half (NORMS="1": add_rms_norm_q8_k_1
# launched, or run by ffn's last block).
set -u
cd build/micro
nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -O3 -fmad=false -o /tmp/ffn ffn.cu 2>&1 | grep -i error
for g in ${GAPS:-0 8000}; do
	for l in ${LAGS:-1 2}; do
		for d in ${DPRES:-0 1}; do
			GAP=$g LAG=$l DPRE=$d timeout -s KILL 60 /tmp/ffn
		done
	done
	for n in ${NORMS:-1}; do
		GAP=$g NORM=$n DPRE=1 timeout -s KILL 60 /tmp/ffn
	done
done
