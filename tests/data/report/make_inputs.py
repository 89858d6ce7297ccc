#!/usr/bin/env python3
"""Inputs for the report golden tests (tests/cli/t400-report.sh).

Hand-built, deterministic documents in perfloop's formats; rerun after a
format change and regenerate the expected outputs with
    tests/cli/t400-report.sh --update   (see that script)
"""
import json
import statistics

def finding(fid, leaf, signal, severity, status, path, line, fn, metric, value, unit,
            text, ratio, confidence, level, action, advisory=False):
    f = {"id": fid, "leaf": leaf, "signal": signal, "severity": severity, "status": status,
         "path": path, "location": {"line": line, "column": 5, "function": fn},
         "metric": {"name": metric, "value": value, "unit": unit},
         "evidence": {"text": text, "numbers": ({"ratio": ratio} if ratio else {})},
         "confidence": confidence, "level": level, "suggested_action": action}
    if advisory:
        f["advisory"] = True
    return f

findings = {"schema": "perfloop.findings/1", "tool": "test", "created": "2026-12-02T00:00:00Z",
            "findings": [
    finding("PF-000000000001", "py.nested-loop", "nested loops over 'items'", "high",
            "statically_confirmed", "src/dedup.py", 12, "dedup", "complexity_exponent", 2.0,
            "exponent", "for a in items: for b in items:", None, 0.9, 1,
            "index 'items' in a set once, outside the loop"),
    finding("PF-000000000002", "bench.slow-io", "one write per record", "medium", "measured",
            "src/export.py", 40, "export", "timing", 0.2, "s", "0.2 s in 10,000 write calls",
            3.5, 0.8, 3, "batch the writes"),
    finding("PF-000000000003", "py.string-concat", "string += in a loop", "low",
            "statically_confirmed", "src/fmt.py", 7, "render", "allocation_churn", None, None,
            "out += line", None, 0.7, 4, "collect parts and ''.join them"),
    finding("PF-000000000004", "py.dataloader-persistent", "persistent_workers not set", "low",
            "statically_confirmed", "train.py", 30, None, "data_loading_share", None, None,
            "DataLoader(ds, num_workers=4)", None, 0.6, 3,
            "consider persistent_workers=True", advisory=True),
]}
json.dump(findings, open("findings.json", "w"), indent=1)

prof = {"schema": "perfloop.findings/1", "tool": "test", "created": "2026-12-02T00:00:00Z",
        "findings": [finding("PF-000000000005", "py.item-in-loop", ".item() in the training loop",
                             "medium", "requires_profiling", "train.py", 55, "train",
                             "gpu_sync", None, None, "loss.item()", None, 0.7, 5,
                             "accumulate on the device; sync once per epoch")]}
json.dump(prof, open("findings-profiling.json", "w"), indent=1)

def summary(p50, n, cv, cmd):
    # n (even) runs half below, half above p50 by the same step: their median
    # is p50 and their CV cv, as perfloop's reader checks (stdev over n - 1)
    step = p50 * cv * ((n - 1) / n) ** 0.5
    walls = [p50 - step if i % 2 else p50 + step for i in range(n)]
    cv = statistics.stdev(walls) / statistics.mean(walls)
    samples = [{"wall_s": w, "user_s": w, "sys_s": 0.0, "max_rss_bytes": 2097152,
                "exit_code": 0, "signal": None, "timed_out": False, "counted": True,
                "outlier": False} for w in walls]
    return {"schema": "perfloop.bench/1", "tool": {"name": "perfloop", "version": "0.1.0"},
            "created": "2026-12-02T00:00:00Z", "interrupted": False,
            "fingerprint": {"cpu_model": "Test CPU", "logical_cores": 2, "physical_cores": 2,
                            "smt": "off", "kernel": "6.1.0", "governor": "unknown",
                            "turbo": "unknown", "loadavg_1m": 0.1, "compiler": None,
                            "python": "3.11.2", "hostname_hash": "0123456789abcdef"},
            "settings": {}, "unsupported_counters": {},
            "benchmarks": [{"name": "export", "command": cmd, "argv": cmd.split(),
                            "parameters": {}, "status": "ok", "failure": None,
                            "samples": samples,
                            "stats": {"wall_s": {"n": n, "min": min(walls), "p50": p50,
                                                 "mean": p50, "stdev": p50 * cv, "cv": cv,
                                                 "mad": step, "p90": max(walls),
                                                 "p99": max(walls), "max": max(walls),
                                                 "ci95_median": [p50, p50], "outliers": []}},
                            "counters": {},
                            "dimensions": {"timing": {"value": p50, "unit": "s", "cv": cv,
                                                      "scored": True, "tier": 3,
                                                      "tier_basis": "relative"}}}],
            "reference": None, "comparisons": [], "baseline": None}

json.dump(summary(0.2, 12, 0.02, "python3 export.py"), open("before.json", "w"), indent=1)
json.dump(summary(0.12, 12, 0.02, "python3 export.py --batched"), open("after.json", "w"), indent=1)

verdict = {"schema": "perfloop.verdict/1", "tool": {"name": "perfloop", "version": "0.1.0"},
           "created": "2026-12-02T00:00:00Z", "verdict": "accept", "benchmark": "export",
           "target": "timing", "before": {"file": "before.json", "p50": 0.2},
           "after": {"file": "after.json", "p50": 0.12}, "gain": 0.4, "min_gain": 0.05,
           "rules": [{"name": n, "passed": True, "detail": "", "numbers": {}} for n in
                     ("target_improved", "timing_not_noisy", "enough_samples",
                      "fingerprint_match", "suite_green", "no_tier_regression")],
           "failed_rules": []}
json.dump(verdict, open("verdict.json", "w"), indent=1)

with open("ledger.jsonl", "w") as f:
    for c, g, v, fr in (("1111111111111111111111111111111111111111", 0.4, "accept", []),
                        (None, -0.02, "no_feasible_win", ["target_improved"])):
        f.write(json.dumps({"schema": "perfloop.ledger/1", "time": "2026-12-02T00:00:00Z",
                            "commit": c, "benchmark": "export", "target": "timing",
                            "before_p50": 0.2, "after_p50": 0.2 * (1 - g), "gain": g,
                            "verdict": v, "failed_rules": fr}) + "\n")
