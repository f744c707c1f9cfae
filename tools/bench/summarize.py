#!/usr/bin/env python3
"""Tables from results.json files of one submission graded several times (tools/bench/*.sh).

  summarize.py stability RESULTS.json...   per exercise: the speed case's medians across the
                                           gradings, their max/min, and whether points agree
  summarize.py walltime RESULTS.json       where one grading's wall time went
"""
import json
import sys


def speed_cases(results):
    for exercise in results["exercises"]:
        for case in exercise["cases"]:
            if case.get("timing"):
                yield exercise, case


def stability(paths):
    runs = [json.load(open(p)) for p in paths]
    print(f"{len(runs)} gradings of {runs[0]['submission']} on {runs[0]['device']}\n")
    print("| exercise | case | student median ms (each grading) | student max/min | window max/min "
          "| reference max/min | ratio max/min | ratio (each grading) | median rse % (max) | batches (min-max) | points |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for exercise, case in speed_cases(runs[0]):
        rows = []
        for run in runs:
            e = next(x for x in run["exercises"] if x["name"] == exercise["name"])
            c = next(x for x in e["cases"] if x["label"] == case["label"])
            rows.append((e, c["timing"]))
        student = [t["student_ms"] for _, t in rows]
        windows = [t["student_window_ms"] for _, t in rows]
        reference = [t["reference_ms"] for _, t in rows]
        ratio = [t["speedup_vs_reference"] for _, t in rows]
        points = sorted({e["points"] for e, _ in rows})
        spread = lambda v: max(v) / min(v) if min(v) > 0 else float("inf")
        worst = max(worst, spread(student))
        rse = max(t["student"]["median_rse"] for _, t in rows) * 100
        reps = [t["student"]["count"] for _, t in rows]
        print(f"| {exercise['name']} | {case['label']} | {' '.join(f'{s:.4f}' for s in student)} "
              f"| {spread(student):.4f} | {spread(windows):.4f} | {spread(reference):.4f} | {spread(ratio):.4f} "
              f"| {' '.join(f'{r:.3f}' for r in ratio)} | {rse:.2f} "
              f"| {min(reps)}-{max(reps)} | {'identical' if len(points) == 1 else points} |")
    # Where the reference's time beside the submission was not simply taken (timing's note).
    held = [f"{e['name']} (grading {k + 1}): {c['timing']['note']}"
            for k, run in enumerate(runs) for e, c in speed_cases(run)
            if "reference ran" in c["timing"].get("note", "")]
    twice = sum(1 for run in runs for _, c in speed_cases(run) if c["timing"].get("turns", 1) > 1)
    print(f"\nspeed cases timed twice (company on the GPU): {twice}")
    for line in held:
        print(f"- {line}")
    totals = sorted({r["points"] for r in runs})
    print(f"\nworst student max/min: {worst:.4f}; total points: "
          f"{'identical, ' + str(totals[0]) if len(totals) == 1 else totals}")


def walltime(path):
    r = json.load(open(path))
    print(f"{r['submission']} on {r['device']}: {r['seconds']:.1f} s in all\n")
    print("| exercise | starts at s | ends at s | compile s | cases s (sum) | GPU lock waits s (sum) "
          "| GPU to itself s (reference alone + turns) | checks s (sum) | largest case s | status |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    exclusive_total = 0
    for e in sorted(r["exercises"], key=lambda e: e.get("started_seconds", 0)):
        cases = sum(c["seconds"] for c in e["cases"])
        waits = sum(c.get("gpu_wait_seconds", 0) for c in e["cases"])
        exclusive = sum(c.get("gpu_exclusive_seconds", 0) for c in e["cases"])
        alone = sum((c.get("timing") or {}).get("alone_seconds", 0) for c in e["cases"])
        turns = sum((c.get("timing") or {}).get("batch_seconds", 0) for c in e["cases"])
        exclusive_total += exclusive
        checks = sum(c["check_seconds"] for c in e["cases"])
        largest = max(e["cases"], key=lambda c: c["seconds"], default=None)
        largest_text = f"{largest['seconds']:.2f} ({largest['label']})" if largest else "-"
        start = e.get("started_seconds", 0)
        print(f"| {e['name']} | {start:.2f} | {start + e['seconds']:.2f} | {e['compile_seconds']:.2f} "
              f"| {cases:.2f} | {waits:.2f} | {exclusive:.2f} ({alone:.2f} + {turns:.2f}) | {checks:.2f} | {largest_text} | {e['status']} |")
    print(f"\neach exercise starts once its own file is built; exercises run side by side, so their seconds "
          f"overlap; checks run beside the GPU work; the speed cases had the GPU to themselves "
          f"{exclusive_total:.1f} s in all (their reference alone and their turns), one at a time")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("stability", "walltime"):
        sys.exit(__doc__)
    (stability if sys.argv[1] == "stability" else lambda p: walltime(p[0]))(sys.argv[2:])
