"""Every C function of the header is reached from Python: a kbackend module function with its
Keras name and the Keras defaults api/kbackend.toml gives, or a call of kbackend.models (the
ctypes layer of Keras models, over the generated signatures of _native.py), apart from the
functions api/kbackend.toml excludes for Python with a reason or lists as Python's gaps (a
listed gap Python reaches fails, so the list only shrinks). Model.fit's and compile's keyword
arguments are the option sets of api/kbackend.toml, with their defaults."""
import inspect
import os
import re
import sys

import pytest

import kbackend as K

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(_ROOT, "api"))
from apigen import model  # noqa: E402

API = model.load_repository(_ROOT)
EXCLUDED = API.excluded("python")
GAPS = set(API.gaps.get("python", ()))
with open(os.path.join(os.path.dirname(K.__file__), "models.py"), encoding="utf-8") as _f:
    _MODELS = _f.read()


def _reached(fn):
    # kbackend.models calls C by name without kb_ (_call("model_fit", ...)) or by the C name
    return (callable(getattr(K, fn.name, None)) or re.search(rf"\b{fn.c_name}\b", _MODELS)
            or re.search(rf'"{fn.c_name[3:]}"', _MODELS))


@pytest.mark.parametrize("fn", [f for f in API.functions if f.name not in EXCLUDED],
                         ids=lambda f: f.name)
def test_every_c_function_is_reached(fn):
    if fn.name in GAPS:
        assert not _reached(fn), f"{fn.name} is reached now: remove it from [gaps] python"
    else:
        assert _reached(fn), f"kbackend.{fn.name} ({fn.c_name}) is missing"


@pytest.mark.parametrize("fn", [f for f in API.functions if f.keras and f.name not in EXCLUDED],
                         ids=lambda f: f.name)
def test_keras_signatures_are_the_described_ones(fn):
    params = inspect.signature(getattr(K, fn.name)).parameters
    for arg in fn.args:
        assert arg.name in params, f"{fn.name}: no parameter {arg.name}"
        default = params[arg.name].default
        if arg.required:
            assert default is inspect.Parameter.empty, f"{fn.name}({arg.name}) has a default"
        else:
            assert default == arg.default, f"{fn.name}({arg.name}={default!r})"


@pytest.mark.parametrize("option_set", sorted(API.options), ids=str)
def test_model_options_are_the_described_ones(option_set):
    """Model.compile and Model.fit take every key of their set in api/kbackend.toml, with its
    default (None standing for it: the method fills it in, or leaves the key out)."""
    from kbackend import models
    params = inspect.signature(getattr(models.Model, option_set)).parameters
    for key in API.options[option_set].keys:
        assert key.name in params, f"Model.{option_set}: no parameter {key.name}"
        default = params[key.name].default
        if key.has_default:
            assert default is None or default == key.default, \
                f"Model.{option_set}({key.name}={default!r}), described: {key.default!r}"
        else:
            assert default in (None, inspect.Parameter.empty), \
                f"Model.{option_set}({key.name}={default!r}): described without a default"
