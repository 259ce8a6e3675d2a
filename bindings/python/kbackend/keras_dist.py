"""Data-parallel training of Keras 2.2 models on kbackend, on the model of Horovod's Keras module.

One process per device or host, each training the same model on its share of the data; the
gradients are averaged across the processes inside the training function, so every process
applies the same update and the weights stay equal::

    import keras
    import kbackend.keras_dist as kd

    kd.init()                                   # rank 0 of 1 without a launcher
    x_train, y_train = kd.shard(x_train, y_train)
    opt = kd.DistributedOptimizer(keras.optimizers.SGD(0.01 * kd.size(), momentum=0.9))
    model.compile(opt, "categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=32,
              callbacks=[kd.BroadcastGlobalVariablesCallback(0), kd.MetricAverageCallback()],
              verbose=1 if kd.rank() == 0 else 0)

Launched as ``mpirun -np 2 python train.py`` on one host, ``mpirun -np 8 -H a:4,b:4 python
train.py`` on two (or by Slurm's ``srun``). With batch_size b on n processes a step sees n*b
samples, so the learning rate is usually scaled by n. Keras must use kbackend
(``KERAS_BACKEND=kbackend.keras_backend``). Every helper also works in a single process, with or
without ``init``: the collectives are then the identity.
"""
import atexit
import sys

import numpy as np

from . import kbackend as _c
from ._api import API as _API
from ._kbackend import KBackendError

_all_reduce = _API["all_reduce"]
_dist_all_reduce = _API["dist_all_reduce"]
_broadcast_variables = _API["dist_broadcast_variables"]


def init(required=True):
    """Joins the job the launcher started (kb_dist_init), leaving it at exit (finalize). Without
    MPI (no plugin, no library) it raises KBackendError, or with required=False returns False and
    the process trains alone."""
    try:
        _c.kb_dist_init()
    except KBackendError as e:
        if required or getattr(e, "status", None) != _c.KB_ERROR_UNAVAILABLE:
            raise
        return False
    atexit.register(_finalize_at_exit)
    return True


def finalize():
    """Waits for every process and leaves the job (MPI cannot start again in this process)."""
    _c.kb_dist_finalize()


def _finalize_at_exit():
    try:
        finalize()
    except KBackendError:
        pass  # a failed job: MPI is left as it is, and the launcher reports the exit


def abort(exit_code=1):
    """Ends every process of the job at once, the launcher reporting exit_code (kb_dist_abort:
    MPI_Abort): the way out after a failed collective, when finalize would wait for the others.
    Without a job it ends this process. Python's output is flushed first; nothing else runs."""
    sys.stdout.flush()
    sys.stderr.flush()
    _c.kb_dist_abort(int(exit_code))


def rank():
    """This process' rank in the job (0 without a launcher)."""
    return _c.kb_dist_rank()


def size():
    """How many processes the job has (1 without a launcher)."""
    return _c.kb_dist_size()


def local_rank():
    """This process' rank among the processes of its host."""
    return _c.kb_dist_local_rank()


def barrier():
    """Waits until every process has called barrier."""
    _c.kb_dist_barrier()


def shard(*arrays):
    """This process' contiguous share of each array (axis 0), the same length on every process
    (the remainder that does not divide evenly is dropped, as each step must be taken by all)."""
    if not arrays:
        raise ValueError("shard: no arrays given")
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError("shard: the arrays differ in length")
    per = n // size()
    if per == 0:
        raise ValueError("shard: %d samples for %d processes" % (n, size()))
    r = rank()
    parts = tuple(a[r * per:(r + 1) * per] for a in arrays)
    return parts[0] if len(parts) == 1 else parts


def allreduce(value, average=True):
    """The sum or average over the processes of a NumPy value or Python number (metrics)."""
    array = np.asarray(value)
    out = _dist_all_reduce(array, "average" if average else "sum")
    return out.item() if np.ndim(value) == 0 and not isinstance(value, np.ndarray) else out


def DistributedOptimizer(optimizer, average=True):
    """A copy of a Keras optimizer whose gradients are summed or averaged over the processes
    inside the training function (after its clipnorm/clipvalue), before its update rule."""
    base = optimizer.__class__
    if getattr(base, "_kbackend_distributed", False):
        raise ValueError("DistributedOptimizer: the optimizer is distributed already")
    op = "average" if average else "sum"

    def get_gradients(self, loss, params):
        return [_all_reduce(g, op) for g in base.get_gradients(self, loss, params)]

    # The same class name: a saved model's training_config names the Keras optimizer.
    cls = type(base.__name__, (base,), {"get_gradients": get_gradients,
                                        "_kbackend_distributed": True})
    return cls.from_config(optimizer.get_config())


def _callback_base():
    import keras
    return keras.callbacks.Callback


def BroadcastGlobalVariablesCallback(root_rank=0):
    """A callback giving every process rank root_rank's weights, the model's and its optimizer's,
    when training begins (whatever each process initialized them to)."""

    class _Broadcast(_callback_base()):
        def __init__(self):
            super().__init__()
            self.root_rank = root_rank
            self.done = False

        def _broadcast(self):
            if self.done:
                return
            weights = list(self.model.weights)
            optimizer = getattr(self.model, "optimizer", None)
            if optimizer is not None:
                weights += list(getattr(optimizer, "weights", []))
            _broadcast_variables(weights, self.root_rank)
            self.done = True

        def on_train_begin(self, logs=None):
            self._broadcast()

        # The optimizer's slots exist once its training function does, which fit builds before
        # on_train_begin; train_on_batch loops have no such call, so the first batch checks too.
        def on_batch_begin(self, batch, logs=None):
            self._broadcast()

    return _Broadcast()


def MetricAverageCallback():
    """A callback that replaces each epoch's metrics (loss, accuracy, val_*) by their average
    over the processes, so every process (and its history) reports the whole job's figures."""

    class _Average(_callback_base()):
        def on_epoch_end(self, epoch, logs=None):
            if logs is None:
                return
            names = sorted(k for k, v in logs.items() if np.ndim(v) == 0)
            if not names:
                return
            values = np.array([float(logs[k]) for k in names], np.float64)
            averaged = _dist_all_reduce(values, "average")
            for k, v in zip(names, averaged):
                logs[k] = float(v)

    return _Average()
