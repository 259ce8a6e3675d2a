import numpy as np
import pytest

import kb


@pytest.fixture(params=[kb.F32, kb.F64], ids=["float32", "float64"])
def dt(request):
    """The floating dtype code under test."""
    return request.param


@pytest.fixture(params=["const", "ph"])
def mode(request):
    """Inputs as constants, or fed to placeholders with an unknown first dimension."""
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _restore_config():
    eps, fx = kb.epsilon(), kb.c_int32()
    kb.check(kb.lib.kb_floatx(kb.ctypes.byref(fx)))
    yield
    kb.check(kb.lib.kb_set_epsilon(eps))
    kb.check(kb.lib.kb_set_floatx(fx.value))
