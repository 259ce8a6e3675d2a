"""The benchmark table: reads the JSON lines that bench/run_suite.sh collected (one file per system
and round, <system>.<round>.jsonl, in a folder) and prints one Markdown table, per workload: the
median over rounds of each system's per-round median, the ratio kbackend / best peer (below 1:
kbackend is faster or smaller), the spread, and for W1-W3 the fraction of this machine's limit
(W1/W2: bytes a call must move / time vs the copy bandwidth; W3: GFLOP/s vs the fp32 FMA peak).
Then kbackend's heap allocations and page faults per call in the steady state. Files named
<system>.<round>.busy.jsonl (bench/run_suite.sh with BUSY=1: the same round beside a busy core)
add a second table: per workload and system the busy median / quiet median, and kbackend's busy
median / the best peer's. Writes the same as JSON (table.json in the folder). Standard library
only.
Usage: python3 bench/suite_table.py FOLDER"""
import glob
import json
import os
import re
import statistics
import sys

ORDER = ["kbackend", "pytorch", "pytorch-jit", "pytorch-compile", "tensorflow", "numpy"]


def load(folder):
    """machine records (quiet runs only), quiet runs and busy runs: runs[workload][system] is a
    list of one record per round."""
    machine, quiet, busy = [], {}, {}
    for path in sorted(glob.glob(os.path.join(folder, "*.jsonl"))):
        is_busy = path.endswith(".busy.jsonl")
        runs = busy if is_busy else quiet
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            if rec["system"] == "machine":
                if not is_busy:
                    machine.append(rec)
            else:
                runs.setdefault(rec["workload"], {}).setdefault(rec["system"], []).append(rec)
    return machine, quiet, busy


def best_peer(medians):
    """The system other than kbackend with the smallest median, or None."""
    peers = [s for s in medians if s != "kbackend"]
    return min(peers, key=medians.get) if peers else None


def busy_rows(quiet, busy):
    """Per workload: each system's busy median / quiet median, and kbackend's busy median / the
    best peer's busy median."""
    rows = []
    for w in sorted(busy, key=natural):
        row = {"workload": w, "slowdown": {}, "busy_median": {}}
        for s, recs in busy[w].items():
            med = statistics.median(value(r) for r in recs)
            row["busy_median"][s] = med
            if s in quiet.get(w, {}):
                row["slowdown"][s] = med / statistics.median(value(r) for r in quiet[w][s])
        best = best_peer(row["busy_median"])
        if best and "kbackend" in row["busy_median"]:
            row["best_peer"] = best
            row["ratio"] = row["busy_median"]["kbackend"] / row["busy_median"][best]
        rows.append(row)
    return rows


def natural(workload):
    """Sort key: W2 before W10, n=512 before n=1024."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", workload)]


def value(rec):
    """The figure of one round: MiB for W10, microseconds per call for W9, else ms."""
    if "peak_rss_mib" in rec:
        return rec["peak_rss_mib"]
    if rec["workload"].startswith("W9"):
        return rec["median_ms"]  # per 1000 calls in ms = per call in microseconds
    return rec["median_ms"]


def unit(workload):
    return "MiB" if workload.startswith("W10") else "us/call" if workload.startswith("W9") else "ms"


def spread(recs):
    """max of the spread within a round ((max - min) / median of its repeats) and the range of the
    round medians over their median."""
    vals = [value(r) for r in recs]
    between = (max(vals) - min(vals)) / statistics.median(vals) if vals else 0
    within = max((r.get("spread", 0) for r in recs), default=0)
    return max(between, within)


def limit_fraction(workload, recs, med, bandwidth, peak):
    r = recs[0]
    if "bytes" in r and bandwidth:
        return r["bytes"] / (med * 1e6) / bandwidth
    if "flops" in r and peak and workload.startswith("W3"):
        return r["flops"] / (med * 1e6) / peak
    return None


def main():
    folder = sys.argv[1]
    machine, runs, busy = load(folder)
    bandwidth = max((m["bandwidth_gbps"] for m in machine), default=None)
    peak = machine[0]["peak_gflops"] if machine else None
    systems = [s for s in ORDER if any(s in d for d in runs.values())]
    systems += sorted({s for d in runs.values() for s in d} - set(systems))
    rows = []
    for w in sorted(runs, key=natural):
        d = runs[w]
        row = {"workload": w, "unit": unit(w), "systems": {}}
        for s, recs in d.items():
            med = statistics.median(value(r) for r in recs)
            row["systems"][s] = {"median": med, "rounds": [value(r) for r in recs],
                                 "spread": spread(recs),
                                 "limit_fraction": limit_fraction(w, recs, med, bandwidth, peak)}
        best = best_peer({s: v["median"] for s, v in row["systems"].items()})
        if best:
            row["best_peer"] = best
            if "kbackend" in row["systems"]:
                row["ratio"] = (row["systems"]["kbackend"]["median"]
                                / row["systems"][best]["median"])
        kb_recs = [r for r in d.get("kbackend", []) if "allocs_per_call" in r]
        if kb_recs:
            row["kbackend_steady_state"] = {
                "allocs_per_call": statistics.median(r["allocs_per_call"] for r in kb_recs),
                "onednn_allocs_per_call": statistics.median(
                    r.get("onednn_allocs_per_call", 0) for r in kb_recs),
                "faults_per_call": statistics.median(r["faults_per_call"] for r in kb_recs)}
        rows.append(row)

    def num(x):
        return "-" if x is None else f"{x:.3g}" if x < 100 else f"{x:.0f}"

    if machine:
        m = machine[0]
        print(f"machine: {m['model']}, {m['cores']} cores, {m['mhz']:.0f} MHz, fp32 peak "
              f"{peak:.0f} GFLOP/s ({m['fp32_lanes']} lanes x {m['fma_units']} FMA units x 2 x "
              f"cores x clock), copy bandwidth {bandwidth:.1f} GB/s (best of 7 copies of "
              f"{m['copy_mib']} MiB, best round)")
    head = ["workload", "unit"] + systems + ["kbackend / best peer", "spread (kb / best peer)",
                                            "of limit (kb / best peer)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        cells = [row["workload"], row["unit"]]
        cells += [num(row["systems"][s]["median"]) if s in row["systems"] else "-"
                  for s in systems]
        kb = row["systems"].get("kbackend")
        best = row["systems"].get(row.get("best_peer"))
        cells.append(f"{row['ratio']:.2f} ({row['best_peer']})" if "ratio" in row else "-")
        cells.append(" / ".join(f"{x['spread']:.0%}" if x else "-" for x in (kb, best)))
        fr = [x["limit_fraction"] if x else None for x in (kb, best)]
        cells.append(" / ".join(f"{f:.0%}" for f in fr if f is not None)
                     if any(f is not None for f in fr) else "")
        print("| " + " | ".join(cells) + " |")
    steady = [r for r in rows if "kbackend_steady_state" in r]
    if steady:
        print("\nkbackend in the steady state (kb_function_call_into), per call (median over rounds; "
              "W9 per 1000 calls): heap allocations (malloc and friends, all threads), those "
              "inside oneDNN (its primitives' argument tables, its sgemm's workspace), minor page "
              "faults")
        print("| workload | allocations | of which in oneDNN | page faults |")
        print("|---|---|---|---|")
        for r in steady:
            st = r["kbackend_steady_state"]
            print(f"| {r['workload']} | {st['allocs_per_call']:.0f} | "
                  f"{st['onednn_allocs_per_call']:.0f} | {st['faults_per_call']:.0f} |")
    table = {"machine": machine, "bandwidth_gbps": bandwidth, "peak_gflops": peak,
             "systems": systems, "rows": rows}
    if busy:
        table["busy_rows"] = busy_rows(runs, busy)
        print("\nBeside a busy core (a CPU-bound process pinned to the last core, same rounds): "
              "busy median / quiet median per system, and kbackend's busy median / the best "
              "peer's busy median")
        head = ["workload"] + systems + ["kbackend busy / best peer busy"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in table["busy_rows"]:
            cells = [row["workload"]]
            cells += [f"{row['slowdown'][s]:.2f}" if s in row["slowdown"] else "-"
                      for s in systems]
            cells.append(f"{row['ratio']:.2f} ({row['best_peer']})" if "ratio" in row else "-")
            print("| " + " | ".join(cells) + " |")
    with open(os.path.join(folder, "table.json"), "w") as f:
        json.dump(table, f, indent=1)
    print(f"(JSON lines and table.json in {folder})")


if __name__ == "__main__":
    main()
