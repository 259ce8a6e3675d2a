"""Jobs of several processes under mpirun, for the tests of data-parallel training here and in
keras_tests: where mpirun and the MPI plugin are, and a job's run with a deadline."""
import os
import shutil
import subprocess

import pytest

import kbackend

MPIRUN = shutil.which("mpirun")
# One host, as CI has it: more processes than cores allowed, none pinned.
LAUNCH = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]


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
    """The job's standard output; it must exit with 0 (its output and errors said otherwise)."""
    env = dict(os.environ, KB_DIST_TIMEOUT="60", OMP_NUM_THREADS="1")
    env.update(env_extra or {})
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


needs_mpi = pytest.mark.skipif(MPIRUN is None or not os.path.exists(mpi_plugin() or ""),
                               reason="no mpirun (Debian: openmpi-bin) or no MPI plugin")
