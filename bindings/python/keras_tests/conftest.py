"""Keras 2.2.4 on kbackend: the environment every test here needs, set before Keras is imported.

KERAS_BACKEND selects kbackend.keras_backend; KERAS_HOME is a scratch folder because Keras writes
keras.json there; sitecustomize.py (the Python 3.11 aliases Keras 2.2.4 uses) is loaded here too,
in case Python did not load it at start-up (run.sh puts this folder on PYTHONPATH)."""
import importlib.util
import os
import sys
import tempfile

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = os.path.join(HERE, "..", "..", "..", "examples", "data", "digits.csv")

os.environ["KERAS_BACKEND"] = "kbackend.keras_backend"
os.environ.setdefault("KERAS_HOME", tempfile.mkdtemp(prefix="keras_home_"))
_spec = importlib.util.spec_from_file_location("_kbackend_keras_aliases",
                                               os.path.join(HERE, "sitecustomize.py"))
_aliases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_aliases)
assert "keras" not in sys.modules or "kbackend" in sys.modules["keras"].backend.backend()


@pytest.fixture(scope="session")
def digits():
    """(x_train, y_train, x_test, y_test): the 1797 8x8 digits scaled to [0, 1], one-hot labels,
    a fixed shuffled 80/20 split."""
    data = np.loadtxt(DIGITS, delimiter=",", comments="#")
    x = (data[:, 1:] / 16.0).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[data[:, 0].astype(int)]
    order = np.random.RandomState(0).permutation(len(x))
    x, y = x[order], y[order]
    n = int(0.8 * len(x))
    return x[:n], y[:n], x[n:], y[n:]
