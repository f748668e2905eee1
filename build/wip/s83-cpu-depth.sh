#!/bin/bash
# s83-cpu-depth.sh: Ember against llama.cpp at depth on the CPU, one engine after the
# other, two rounds (session 83): Llama-3.2-1B Q4_K_M pp4096 and tg64 after 4,096 tokens,
# DeepSeek-V2-Lite Q4_K_M pp2048 and tg32 after 2,048. EMBER (an ember binary),
# LLAMACPP_BENCH and NLC_DIR as build/bench-cpu.sh has them; DIR holds the synthetic models.
M=${DIR:-/tmp/ember-bench}/llama3.2-1b-q4_k_m.gguf
for r in 1 2; do
  echo "1B round $r ember: $(${EMBER:-bin/ember} bench -m $M -backend cpu -p 4096 -n 0 -r 1 2>&1 | grep '^| llama' | cut -d'|' -f7,8 | tr '\n' ' ') $(${EMBER:-bin/ember} bench -m $M -backend cpu -p 0 -n 64 -d 4096 -r 1 2>&1 | grep '^| llama' | cut -d'|' -f7,8 | tr '\n' ' ')"
  echo "1B round $r llama.cpp: $(node ${LLAMACPP_BENCH:?} --nlc-dir ${NLC_DIR:?} --model $M --threads 2 --pp 4096 --tg 64 --reps 1 2>&1 | grep -E '^(pp|tg)' | tr '\n' ' ')"
done
M=${DIR:-/tmp/ember-bench}/deepseek-v2-lite-q4_k_m.gguf
echo "V2 ember: $(${EMBER:-bin/ember} bench -m $M -backend cpu -p 2048 -n 0 -r 1 2>&1 | grep '^| deep' | cut -d'|' -f7,8 | tr '\n' ' ') $(${EMBER:-bin/ember} bench -m $M -backend cpu -p 0 -n 32 -d 2048 -r 1 2>&1 | grep '^| deep' | cut -d'|' -f7,8 | tr '\n' ' ')"
echo "V2 llama.cpp: $(node ${LLAMACPP_BENCH:?} --nlc-dir ${NLC_DIR:?} --model $M --threads 2 --pp 2048 --tg 32 --reps 1 2>&1 | grep -E '^(pp|tg)' | tr '\n' ' ')"
