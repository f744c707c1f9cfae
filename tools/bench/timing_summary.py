#!/usr/bin/env python3
"""One line per speed case of a results.json: the student's and the reference's time of one call,
their precision, the batches, the window and the fixed cost, the ratio and the points."""
import json
import sys

for path in sys.argv[1:]:
    report = json.load(open(path))
    print(f"## {path}: {report.get('points')}/{report.get('max_points')} in {report.get('seconds', 0):.1f} s")
    print("| exercise | case | status | student ms | rse % | batches | reference ms | alone ms | fixed ms | window ms | ratio | speed pts | note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for e in report["exercises"]:
        for c in e["cases"]:
            if not c["timed"]:
                continue
            t = c.get("timing") or {}
            s = t.get("student", {})
            print(f"| {e['name']} | {c['label']} | {c['status']} | {t.get('student_ms', 0):.4f} | "
                  f"{100 * s.get('median_rse', 0):.2f} | {s.get('count', 0)} | {t.get('reference_ms', 0):.4f} | "
                  f"{t.get('reference_alone_ms', 0):.4f} | {t.get('fixed_cost_ms', 0):.3f} | "
                  f"{t.get('student_window_ms', 0):.3f} | {t.get('speedup_vs_reference', 0):.3f} | "
                  f"{e['speed_points']} | {t.get('note', '')[:80]} |")
        if e["status"] != "graded" or any(c["status"] != "pass" for c in e["cases"]):
            bad = [f"{c['label']}: {c['status']} {c['summary'][:100]}" for c in e["cases"] if c["status"] != "pass"]
            print(f"  {e['name']}: {e['status']} {e['message'][:120]} {bad[:3]}")
