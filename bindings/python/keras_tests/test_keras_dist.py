"""Data-parallel Keras (kbackend.keras_dist): dist_keras_job.py under `mpirun -np 2` over shared
memory and over TCP (as between hosts), as one process without a launcher, and without the MPI
plugin. Each run must print every rank's "ok" (the job checks its weights against a one-process
run and across ranks)."""
import os
import shutil
import subprocess
import sys

import pytest

import kbackend

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "dist_keras_job.py")
EXAMPLE = os.path.join(HERE, "..", "examples", "train_keras_dist.py")
MPIRUN = shutil.which("mpirun")


def mpi_plugin():
    """libkbackend_mpi.so beside the libkbackend this process loaded, where kb_dist_init looks."""
    kbackend.backend()  # the library is loaded
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libkbackend.so"):
                return os.path.join(os.path.dirname(path), "libkbackend_mpi.so")
    return None


def run(command, env_extra=None, timeout=240):
    env = dict(os.environ, KB_DIST_TIMEOUT="60", OMP_NUM_THREADS="1")
    env.update(env_extra or {})
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


needs_mpi = pytest.mark.skipif(MPIRUN is None or not os.path.exists(mpi_plugin() or ""),
                               reason="no mpirun (Debian: openmpi-bin) or no MPI plugin")


@needs_mpi
@pytest.mark.parametrize("transport", [[], ["--mca", "btl", "tcp,self"]], ids=["shm", "tcp"])
def test_two_processes_equal_one_with_twice_the_batch(transport):
    out = run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"] + transport
              + ["-np", "2", sys.executable, JOB])
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
    out = run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", "2",
               sys.executable, EXAMPLE])
    for r in range(2):
        assert "rank %d epoch  8" % r in out, out
    assert "test accuracy" in out, out
