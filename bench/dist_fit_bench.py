"""Weak scaling of the native data-parallel fit (Model.fit(distributed=True)): every process
takes `batch` rows of each step, so n processes go through n times the samples of one in the
same number of steps. One JSON line per model from rank 0: processes, threads per process, ms
per step (the median of the epochs after the first, which builds and compiles) and samples per
second over all processes.

  one process, one thread:  OMP_NUM_THREADS=1 PYTHONPATH=build-bind/bindings/python \\
                            /usr/bin/python3 bench/dist_fit_bench.py
  two processes:            OMP_NUM_THREADS=1 PYTHONPATH=build-bind/bindings/python \\
                            mpirun --allow-run-as-root --bind-to none -np 2 \\
                            /usr/bin/python3 bench/dist_fit_bench.py
  one process, two threads: OMP_NUM_THREADS=2 ... /usr/bin/python3 bench/dist_fit_bench.py

Weak-scaling efficiency: samples/s of n processes over n times those of one (docs/performance.md).
Models: mlp (784 -> 512 relu -> 512 relu -> 10 softmax, 0.67 M weights, Adam) and cnn (28x28x1:
Conv2D 32 3x3 relu, MaxPooling2D, Conv2D 64 3x3 relu, MaxPooling2D, Dense 10, Adam), on random
data; arguments: [epochs] [steps per epoch] [batch per process]."""
import json
import statistics
import sys
import time

import numpy as np

import kbackend
import kbackend.keras_dist as kd
from kbackend import models


def dense(name, units, activation, shape=None):
    config = {"name": name, "units": units, "activation": activation}
    if shape:
        config["batch_input_shape"] = [None] + shape
    return {"class_name": "Dense", "config": config}


MODELS = {
    "mlp": ([784], [dense("h1", 512, "relu", [784]), dense("h2", 512, "relu"),
                    dense("out", 10, "softmax")]),
    "cnn": ([28, 28, 1], [
        {"class_name": "Conv2D", "config": {"name": "c1", "filters": 32, "kernel_size": [3, 3],
                                            "activation": "relu",
                                            "batch_input_shape": [None, 28, 28, 1]}},
        {"class_name": "MaxPooling2D", "config": {"name": "p1"}},
        {"class_name": "Conv2D", "config": {"name": "c2", "filters": 64, "kernel_size": [3, 3],
                                            "activation": "relu"}},
        {"class_name": "MaxPooling2D", "config": {"name": "p2"}},
        {"class_name": "Flatten", "config": {"name": "f"}},
        dense("out", 10, "softmax")]),
}


def main():
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    kd.init(required=False)
    size = kd.size()
    for name, (shape, layers) in MODELS.items():
        kbackend.set_random_seed(1)
        model = models.model_from_json(json.dumps(
            {"class_name": "Sequential", "config": {"name": name, "layers": layers}}))
        model.compile("adam", "sparse_categorical_crossentropy")
        rows = steps * batch * size  # every process holds all of them, takes its share
        gen = np.random.default_rng(0)
        x = gen.random([rows] + shape, dtype=np.float32)
        y = gen.integers(0, 10, rows)
        ends = []
        model.fit(x, y, batch_size=batch, epochs=epochs, verbose=0, distributed=True,
                  callbacks=[lambda epoch, b, logs: ends.append(time.perf_counter()) if b == -1
                             else None])
        epoch_s = [b - a for a, b in zip(ends, ends[1:])]  # the epochs after the first
        ms = 1e3 * statistics.median(epoch_s) / steps
        if kd.rank() == 0:
            print(json.dumps({"model": name, "processes": size,
                              "threads": kbackend.num_threads(),
                              "batch_per_process": batch, "ms_per_step": round(ms, 3),
                              "samples_per_s": round(batch * size * 1e3 / ms, 1)}), flush=True)


if __name__ == "__main__":
    main()
