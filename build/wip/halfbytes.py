# halfbytes.py DIR: a timing probe, never for results. Edits DIR's kernel sources (a
# ptx-copy.sh directory) so that, under -DEMBER_HALF_ID, mv1_q8_0 (the routed downs,
# mmv_id_q8_0) and, under -DEMBER_HALF_ROUTE, mmv_route (the routed gate/up) read each
# odd block's weights from the even block before it: the same loads, instructions and
# round trips, half the distinct bytes (the pair's lanes coalesce into one sector set).
# Whether the products speed up says whether their bytes or their round trips bound
# them (session 101's next step 2: the packed Q5_0 downs).
import sys

d = sys.argv[1]


def edit(name, old, new):
    p = f"{d}/{name}"
    s = open(p).read()
    assert s.count(old) == 1, (name, old)
    open(p, "w").write(s.replace(old, new))


edit("mv1.cuh",
     "#pragma unroll\n        for (int i = 0; i < R; i++) Q[i] = ldw16i<EF>(w[i] + 32 * ib + 16 * half), DW[i] = ldw2<EF>(w[i] + 32 * nb + 2 * ib);",
     "#ifdef EMBER_HALF_ID\n        const int hb = ib & ~1;\n#else\n        const int hb = ib;\n#endif\n"
     "#pragma unroll\n        for (int i = 0; i < R; i++) Q[i] = ldw16i<EF>(w[i] + 32 * hb + 16 * half), DW[i] = ldw2<EF>(w[i] + 32 * nb + 2 * hb);")
edit("moe.cu",
     "const uint8_t* base = (m ? W2 : W) + (i64)sel[r / G] * estride + BB * ib;",
     "#ifdef EMBER_HALF_ROUTE\n        const uint8_t* base = (m ? W2 : W) + (i64)sel[r / G] * estride + BB * (ib & ~1);\n#else\n"
     "        const uint8_t* base = (m ? W2 : W) + (i64)sel[r / G] * estride + BB * ib;\n#endif")
