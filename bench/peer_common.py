"""What the peer scripts (torch_peer.py, tf_peer.py, numpy_peer.py) share: timing a call the way
kb_bench does (warm-up, repeats, median, spread, CPU time) and printing one JSON line; the peak
memory of a workload run in a fresh process (W10). Standard library only."""
import json
import os
import resource
import subprocess
import sys
import time


def call_ms(call, calls, warm=3):
    """Milliseconds of each of `calls` calls after `warm` warm-up ones, sorted."""
    for _ in range(warm):
        call()
    ms = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        ms.append((time.perf_counter() - t0) * 1e3)
    return sorted(ms)


def measure(system, workload, device, warmup, repeats, call, flops=0.0, nbytes=0.0,
            sync=lambda: None):
    for _ in range(warmup):
        call()
    sync()
    ms, cpu = [], []
    for _ in range(repeats):
        c0 = time.process_time()
        t0 = time.perf_counter()
        call()
        sync()
        ms.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    ms.sort()
    cpu.sort()
    med = ms[len(ms) // 2]
    rec = {"system": system, "workload": workload, "device": device, "median_ms": med,
           "spread": (ms[-1] - ms[0]) / med, "cpu_ms": cpu[len(cpu) // 2]}
    if flops:
        rec["flops"] = flops
        rec["gflops"] = flops / (med * 1e6)
    if nbytes:
        rec["bytes"] = nbytes
        rec["gbps"] = nbytes / (med * 1e6)
    print(json.dumps(rec), flush=True)


def print_peak_rss(system, workload, device):
    """Peak resident memory of this process: VmHWM (this process image alone) and ru_maxrss."""
    hwm = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = float(line.split()[1])
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"system": system, "workload": workload, "device": device,
                      "peak_rss_mib": hwm / 1024, "ru_maxrss_mib": maxrss / 1024}), flush=True)


def w10(script, device, workloads=("W7", "W8")):
    """Runs `script device rss W7` (and W8) in fresh interpreters and passes on their peak-memory
    lines."""
    for w in workloads:
        out = subprocess.run([sys.executable, script, device, "rss", w], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        for line in out.splitlines():
            if "peak_rss_mib" in line:
                print(line, flush=True)


def selected(only, name):
    """Whether workload `name` (e.g. "W1") is in the comma-separated selection (empty: all)."""
    return not only or name in only.split(",")
