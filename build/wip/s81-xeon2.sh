# s81-xeon2.sh: Llama-3.2-1B prompt and decode on the GPU machine's Xeon, AVX2 path, the
# committed binary (bin/dev/ember: AVX2 only) against this session's (ember.new: AVX-VNNI
# batch products), alternating.
for f in ember ember.new; do xz -d -k -c bin/dev/$f.xz > /tmp/$f && chmod +x /tmp/$f; done
(/tmp/ember synth /tmp/q8.gguf -preset llama3.2-1b -ftype q8_0 >/dev/null 2>&1 &
/tmp/ember synth /tmp/q40.gguf -preset llama3.2-1b -ftype q4_0 >/dev/null 2>&1 &
/tmp/ember synth /tmp/q4k.gguf -preset llama3.2-1b -ftype q4_k_m >/dev/null 2>&1 & wait)
for r in 1 2 3; do for m in q8 q40 q4k; do for b in ember ember.new; do
	printf '%s %s %s ' $r $m $b; EMBER_CPU_ISA=avx2 timeout 60 /tmp/$b bench -m /tmp/$m.gguf -p 512 -n 32 -r 1 -t ${T:-8} -json 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); print(j['isa'], round(j['pp_tok_s'],1), round(j['tg_tok_s'],1))"
done; done; done
