"""Data-parallel Keras (kbackend.keras_dist): dist_keras_job.py under `mpirun -np 2` over shared
memory and over TCP (as between hosts), as one process without a launcher, and without the MPI
plugin. Each run must print every rank's "ok" (the job checks its weights against a one-process
run and across ranks)."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))  # the jobs' helpers, shared
from mpi_jobs import LAUNCH, needs_mpi, run  # noqa: E402

JOB = os.path.join(HERE, "dist_keras_job.py")
EXAMPLE = os.path.join(HERE, "..", "examples", "train_keras_dist.py")


@needs_mpi
@pytest.mark.parametrize("transport", [[], ["--mca", "btl", "tcp,self"]], ids=["shm", "tcp"])
def test_two_processes_equal_one_with_twice_the_batch(transport):
    out = run(LAUNCH + transport + ["-np", "2", sys.executable, JOB])
    for r in range(2):
        assert "rank %d of 2: ok (distributed" % r in out, out


def test_one_process_without_a_launcher():
    out = run([sys.executable, JOB, "optional"])
    assert "rank 0 of 1: ok" in out, out


def test_without_the_mpi_plugin_the_helpers_train_alone():
    out = run([sys.executable, JOB, "optional"], {"KB_MPI_PLUGIN": "/nonexistent/plugin.so"})
    assert "rank 0 of 1: ok (alone" in out, out


@needs_mpi
def test_the_keras_example_on_two_processes():
    out = run(LAUNCH + ["-np", "2", sys.executable, EXAMPLE])
    for r in range(2):
        assert "rank %d epoch  8" % r in out, out
    assert "test accuracy" in out, out
