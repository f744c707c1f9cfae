#!/usr/bin/env python3
"""Where a speed case's window goes, batch by batch, across gradings (results.json `batches`).

    tools/bench/batches.py RESULTS.json [RESULTS.json ...]

For each timed case and each grading: the median of each kind of batch's window, of the timing
server's own GPU time (writing the inputs, checksumming), and of what is left (the launcher calls,
the GPU switching between processes, the messages), with the relative spread (MAD/median) of each.
"""
import json
import statistics
import sys


def med(values):
    return statistics.median(values) if values else float("nan")


def mad(values):
    if len(values) < 2:
        return float("nan")
    m = med(values)
    return med([abs(v - m) for v in values]) / m if m else float("nan")


def rows(batches, kind, launched=None):
    out = []
    for r in batches.get(kind, []):
        counted, was_launched, window, grader, gen, chk = r
        if not counted or (launched is not None and was_launched != launched):
            continue
        out.append({"w": window, "g": grader, "gen": gen, "chk": chk, "rest": window - gen - chk})
    return out


def main(paths):
    table = {}
    for path in paths:
        results = json.load(open(path))
        for ex in results["exercises"]:
            for case in ex.get("cases", []):
                t = case.get("timing")
                if not t or not t.get("batches"):
                    continue
                b = t["batches"]
                key = (ex["name"], case["label"])
                line = {}
                for name, kind, launched in (("alone_run", "alone", 1), ("alone_empty", "alone", 0),
                                             ("student", "student", None), ("reference", "reference", None),
                                             ("ref_empty", "reference_empty", None)):
                    rs = rows(b, kind, launched)
                    line[name] = {k: (med([r[k] for r in rs]), mad([r[k] for r in rs]), len(rs))
                                  for k in ("w", "gen", "chk", "rest", "g")}
                line["fixed"] = t["fixed_cost_ms"]
                line["student_ms"] = t["student_ms"]
                line["reference_ms"] = t["reference_ms"]
                table.setdefault(key, []).append(line)
    for (exercise, label), lines in table.items():
        print(f"### {exercise} {label}")
        print("| grading | student ms | ref ms | fixed | " + " | ".join(
            f"{n} w/gen/chk/rest (mad%) n" for n in ("alone_run", "alone_empty", "student", "reference", "ref_empty")) + " |")
        print("|" + "---|" * 9)
        for i, line in enumerate(lines):
            cells = []
            for n in ("alone_run", "alone_empty", "student", "reference", "ref_empty"):
                d = line[n]
                cells.append(f"{d['w'][0]:.4f}/{d['gen'][0]:.4f}/{d['chk'][0]:.4f}/{d['rest'][0]:.4f} "
                             f"({100*d['w'][1]:.2f}/{100*d['rest'][1]:.2f}) {d['w'][2]}")
            print(f"| {i+1} | {line['student_ms']:.4f} | {line['reference_ms']:.4f} | {line['fixed']:.4f} | "
                  + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
