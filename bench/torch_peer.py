"""PyTorch side of W3, W7 and W9 (same shapes, float32), one JSON line per measurement.
Usage: python3 torch_peer.py cpu|cuda [repeats]"""
import json
import statistics
import sys
import time

import torch


def measure(workload, device, warmup, repeats, call, flops=0.0):
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(warmup):
        call()
    sync()
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        sync()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    med = ms[len(ms) // 2]
    rec = {"system": "pytorch", "workload": workload, "device": device, "median_ms": med,
           "spread": (ms[-1] - ms[0]) / med}
    if flops:
        rec["gflops"] = flops / (med * 1e6)
    print(json.dumps(rec), flush=True)


def main():
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.manual_seed(0)
    for n in (512, 1024, 2048):
        a = torch.randn(n, n, device=device)
        b = torch.randn(n, n, device=device)
        # Reduced to one number as on the kbackend side.
        measure(f"W3 dot n={n}", device, 3, repeats, lambda: torch.mm(a, b).sum().item(),
                2.0 * n ** 3)

    # W7: the data crosses from host memory every step, as it does for a compiled kbackend call.
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x_host = torch.randn(128, 784)
    y_host = torch.arange(128) % 10

    def step():
        x = x_host.to(device)
        y = y_host.to(device)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    measure("W7 mlp step", device, 5, repeats, step)

    a1 = torch.randn(1)
    b1 = torch.randn(1)

    def thousand_adds():
        for _ in range(1000):
            (a1.to(device) + b1.to(device)).cpu()

    measure("W9 call overhead x1000", device, 2, max(5, repeats // 4), thousand_adds)


if __name__ == "__main__":
    main()
