set -u
R=$PWD
for f in bin/dev/*.xz; do xz -d -f "$f"; done; chmod +x bin/dev/*
E=$R/bin/dev/ember L=$OUT P=/tmp/ptx2
mkdir -p $P
[ -f /tmp/v2.gguf ] || $E synth /tmp/v2.gguf -preset deepseek-v2-lite -ftype q4_k_m >/dev/null 2>&1 &
[ -f /tmp/q4.gguf ] || $E synth /tmp/q4.gguf -preset llama3.1-8b -ftype q4_k_m >/dev/null 2>&1 &
(cd kernels/cuda && h=$(cat mmq.cu $(LC_ALL=C ls *.cuh) | sha256sum | cut -d" " -f1) && nvcc -arch=sm_90 -ptx -O3 -fmad=false -o /tmp/mmq.raw.ptx mmq.cu 2>/dev/null && { echo "// ember-sources-sha256: $h"; cat /tmp/mmq.raw.ptx; } >$P/mmq.ptx && cp $P/mmq.ptx $L/ && for m in ops quant matmul dequant mmf mvs moe sample attention attention_dec attention_short attention_split attention_tc; do cp $m.ptx $P/; done)
ls $P | wc -l
C=inference/backend/cuda T=$R/bin/dev/cuda.test
(cd $C && EMBER_CUDA_PTX_DIR=$P timeout -s KILL 200 $T -test.run 'MatMul|MMQ' > $L/products.log 2>&1; echo "products rc $?" >> $L/products.log) &
(cd inference/model/deepseek2 && EMBER_CUDA_PTX_DIR=$P timeout -s KILL 200 $R/bin/dev/deepseek2.test -test.run CUDA > $L/ds2.log 2>&1; echo "ds2 rc $?" >> $L/ds2.log) &
wait
tail -1 $L/products.log; tail -1 $L/ds2.log; grep -h -- "--- FAIL" $L/*.log | head
pp() { (cd $C && EMBER_CUDA_BENCH=1 EMBER_CUDA_BENCH_ROWS=16,32,64 EMBER_CUDA_BENCH_SHAPES=4096x4096,14336x4096 timeout -s KILL 120 "$T" -test.run PrefillProducts -test.v 2>&1 | grep rows: | sed 's/ mmf [^)]*)//; s/ cuBLASLt.*//; s/.*go:207: //'); }
echo "== old"; pp
echo "== new"; EMBER_CUDA_PTX_DIR=$P pp
b() { timeout -s KILL 90 "$E" bench -backend cuda "$@" 2>&1 | grep '^| \|ember:' | tail -1 | cut -d'|' -f6; }
for i in 1 2; do
echo "8B 16: old $(b -m /tmp/q4.gguf -streams 16 -p 512 -n 128) new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/q4.gguf -streams 16 -p 512 -n 128)"
echo "V2 64: old $(b -m /tmp/v2.gguf -streams 64 -p 512 -n 128) new $(EMBER_CUDA_PTX_DIR=$P b -m /tmp/v2.gguf -streams 64 -p 512 -n 128)"
done
