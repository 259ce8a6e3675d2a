"""The tests import kbackend from PYTHONPATH (bindings/run_tests.sh points it at the build tree,
build-bind/bindings/python) or from an installed package; never from the source folder, which
has no extension."""
import os
import sys

import numpy as np
import pytest

_here = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(_here) in [os.path.abspath(p or ".") for p in sys.path]:
    sys.path.remove(os.path.dirname(_here))

import kbackend as K  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_config():
    """Every test starts from the default configuration."""
    yield
    K.set_floatx("float32")
    K.set_epsilon(1e-7)
    K.set_image_data_format("channels_last")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
