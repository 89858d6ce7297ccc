#!/usr/bin/python3
"""Reference values for tests/unit/test_stats.c, computed with numpy/scipy.

Run with Debian's interpreter (it sees python3-numpy and python3-scipy):
    /usr/bin/python3 tests/data/make_stats_reference.py > tests/data/stats_reference.json
The datasets are generated from fixed seeds so the file is reproducible.
"""
import json

import numpy as np
from scipy import stats

rng = np.random.default_rng(20261202)


def describe(x):
    x = np.asarray(x, dtype=float)
    med = float(np.median(x))
    mad = float(stats.median_abs_deviation(x))
    if mad > 0:
        z = 0.6745 * (x - med) / mad
    else:
        meanad = float(np.mean(np.abs(x - med)))
        z = (x - med) / (1.253314 * meanad) if meanad > 0 else np.zeros_like(x)
    outliers = [int(i) for i in np.nonzero(np.abs(z) > 3.5)[0]] if len(x) >= 3 else []
    return {
        "n": int(len(x)),
        "min": float(np.min(x)),
        "p50": med,
        "mean": float(np.mean(x)),
        "stdev": float(np.std(x, ddof=1)) if len(x) > 1 else 0.0,
        "cv": (float(np.std(x, ddof=1) / abs(np.mean(x))) if len(x) > 1 else 0.0),
        "mad": mad,
        "p90": float(np.percentile(x, 90)),
        "p99": float(np.percentile(x, 99)),
        "max": float(np.max(x)),
        "outliers": outliers,
    }


datasets = {
    "single": [0.5],
    "pair": [0.25, 0.75],
    "small_odd": [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0],
    "with_outlier": [10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 10.05, 30.0, 9.95, 10.1],
    "constant": [2.0] * 8,
    "mad_zero": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 5.0],
    "normal_200": list(rng.normal(0.2, 0.004, 200)),
    "lognormal_57": list(rng.lognormal(-3.0, 0.3, 57)),
    "uniform_1000": list(rng.uniform(1.0, 2.0, 1000)),
}

mwu_pairs = {
    "exact_small": ([1.1, 2.3, 3.5, 0.2, 5.9], [4.4, 6.1, 7.2, 8.8, 9.0, 3.1]),
    "exact_8x30": (list(rng.normal(1.0, 0.1, 8)), list(rng.normal(1.05, 0.1, 30))),
    "ties_small": ([1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 4.0, 4.0, 5.0]),
    "asym_40x40": (list(rng.normal(0.20, 0.004, 40)), list(rng.normal(0.21, 0.004, 40))),
    "asym_same": (list(rng.normal(0.20, 0.004, 30)), list(rng.normal(0.20, 0.004, 35))),
    "asym_ties": ([round(v, 2) for v in rng.normal(1.0, 0.02, 50)],
                  [round(v, 2) for v in rng.normal(1.01, 0.02, 45)]),
}

out = {"describe": {}, "mannwhitneyu": {}, "bootstrap_median": {}}
for name, x in datasets.items():
    out["describe"][name] = {"x": [float(v) for v in x], "expect": describe(x)}

for name, (a, b) in mwu_pairs.items():
    r = stats.mannwhitneyu(a, b, alternative="two-sided", method="auto")
    out["mannwhitneyu"][name] = {
        "a": [float(v) for v in a],
        "b": [float(v) for v in b],
        "u1": float(r.statistic),
        "p": float(r.pvalue),
    }

# The bootstrap depends on the random stream, so we compare our interval with
# scipy's percentile bootstrap at a large number of resamples, with a
# tolerance (see test_stats.c).
for name in ("normal_200", "lognormal_57", "uniform_1000"):
    x = np.asarray(datasets[name])
    res = stats.bootstrap((x,), np.median, n_resamples=20000, method="percentile",
                          confidence_level=0.95, random_state=np.random.default_rng(7))
    out["bootstrap_median"][name] = {
        "lo": float(res.confidence_interval.low),
        "hi": float(res.confidence_interval.high),
        "se": float(res.standard_error),
    }

print(json.dumps(out, indent=1))
