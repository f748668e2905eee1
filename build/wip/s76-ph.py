#!/usr/bin/env python3
# s76-ph.py DIR: phase stamps (globaltimer) in DIR/moe.cu's mmv_route, for one device
# call's diagnosis only (session 76): lane 0 of every warp of blocks 0, 200 and the last
# prints "PR blk B w W sm S n N | wait 0 guess .. route .. sync .. end .." in ns after
# the warp's pdl_wait, N the tasks it took. Not for the engine.
import sys
p = sys.argv[1] + "/moe.cu"
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new, 1)
rep("#include \"mv1.cuh\"", "#include <cstdio>\n#include \"mv1.cuh\"")
rep("""    float bv[MOE_MAX_EXPERTS / 32];
    if (warp == 0) {
        if (small) moe_bias""", """    unsigned long long PT[6] = {0, 0, 0, 0, 0, 0};
    auto stamp = [&](int j) { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(PT[j])::"memory"); };
    stamp(0);
    int ntask = 0;
    float bv[MOE_MAX_EXPERTS / 32];
    if (warp == 0) {
        if (small) moe_bias""")
rep("""    pdl_wait();
    int xs[16];""", """    pdl_wait();
    stamp(1);
    int xs[16];""")
rep("""        __syncthreads();  // s.guess
        pre = warp != 0;
    }""", """        __syncthreads();  // s.guess
        pre = warp != 0;
    }
    stamp(2);""")
rep("""    __syncthreads();  // s.isel, s.same
    if (!guess""", """    stamp(3);
    __syncthreads();  // s.isel, s.same
    stamp(4);
    if (!guess""")
rep("""        pre = false;
        float acc[R];""", """        pre = false;
        ntask++;
        float acc[R];""")
rep("""            if constexpr (Q5) ha[i] = nha[i], hb[i] = nhb[i];
        }
    }
}""", """            if constexpr (Q5) ha[i] = nha[i], hb[i] = nhb[i];
        }
    }
    stamp(5);
    if (lane == 0 && (blockIdx.x == 0 || blockIdx.x == 200 || blockIdx.x == gridDim.x - 1)) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const long long z = (long long)PT[1];
        printf("PR blk %d w %d sm %u n %d | entry %lld guess %lld route %lld sync %lld end %lld\\n", blockIdx.x, warp, smid, ntask,
               (long long)PT[0] - z, (long long)PT[2] - z, (long long)PT[3] - z, (long long)PT[4] - z, (long long)PT[5] - z);
    }
}""")
open(p, "w").write(s)
