"""A collapsed-stack profile of N samples over about N/5 distinct stacks
for the HTML report's size and speed checks (t401, bench/report_html.sh):
a tree of calls 3 to 30 deep where each level picks one of 10 functions,
the first ones far more often (as real programs' hot paths). Deterministic.

    python3 gen_folded.py OUT.folded [SAMPLES]
"""
import random
import sys

random.seed(7)
samples = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
with open(sys.argv[1], "w") as f:
    for i in range(samples // 5):
        st = ["main (big.py:1)"]
        for d in range(random.randint(3, 30)):
            k = min(int(random.expovariate(0.7)), 9)
            st.append("fn%d_%d (mod%d.py:%d)" % (d, k, k, d * 10 + k))
        f.write(";".join(st) + " 5\n")
