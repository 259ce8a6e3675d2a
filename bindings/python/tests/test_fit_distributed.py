"""Data-parallel native fit (Model.fit(distributed=True)): dist_fit_job.py under `mpirun -np 2`
must end every process with the weights and history of one process fitting the global batch,
rank 0 alone writing checkpoints; without a launcher the same call trains alone."""
import os
import sys

from mpi_jobs import LAUNCH, needs_mpi, run

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "dist_fit_job.py")


@needs_mpi
def test_two_processes_fit_as_one_with_the_global_batch(tmp_path):
    out = run(LAUNCH + ["-np", "2", sys.executable, JOB, "required", str(tmp_path)])
    for r in range(2):
        assert "rank %d of 2: ok" % r in out, out
    assert sorted(os.listdir(tmp_path)) == ["rank0-%d.weights.h5" % e for e in (1, 2, 3)]


def test_one_process_without_a_launcher(tmp_path):
    out = run([sys.executable, JOB, "optional", str(tmp_path)])
    assert "rank 0 of 1: ok" in out, out
    assert len(os.listdir(tmp_path)) == 3
