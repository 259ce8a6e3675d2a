"""compile's and fit's options (the option sets of api/kbackend.toml, generated into
kbackend._signatures.OPTIONS): keyword arguments of their types become the keys the library
takes, and the library refuses any other key, naming it. File errors as Python's OSErrors."""
import json

import numpy as np
import pytest

from kbackend import models
from kbackend._signatures import OPTIONS

DENSE = json.dumps({"class_name": "Sequential", "config": {"name": "s", "layers": [
    {"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "softmax",
                                       "batch_input_shape": [None, 3]}}]}})


def test_keyword_arguments_become_the_described_keys():
    text = models._options_json("fit", shuffle=0, seed=np.int64(3), validation_split=1,
                                initial_epoch=None, class_weight={np.int32(1): 2})
    assert json.loads(text) == {"shuffle": False, "seed": 3, "validation_split": 1.0,
                                "class_weight": {"1": 2.0}}
    assert json.loads(models._options_json("compile", loss_weights=(1, 0.5))) == {
        "loss_weights": [1.0, 0.5]}
    # every key of options_json the table lists is one the library takes
    m = models.model_from_json(DENSE)
    m.compile("sgd", "categorical_crossentropy", loss_weights=[2.0])
    x = np.random.RandomState(0).rand(8, 3).astype(np.float32)
    y = np.eye(2, dtype=np.float32)[np.arange(8) % 2]
    h = m.fit(x, y, epochs=2, verbose=0, shuffle=False, seed=1, validation_split=0.25,
              initial_epoch=1, class_weight={0: 1.0, 1: 3.0}, distributed=True)
    assert h.epoch == [1] and "val_loss" in h.history
    assert {k for k, (_, _, argument) in OPTIONS["fit"].items() if not argument} == \
        {"shuffle", "seed", "validation_split", "initial_epoch", "class_weight", "callbacks",
         "distributed"}


def test_an_unknown_key_is_refused_with_its_name():
    m = models.model_from_json(DENSE)
    with pytest.raises(TypeError, match="shufle"):
        m.fit(np.zeros((2, 3), np.float32), np.zeros((2, 2), np.float32), shufle=True)
    losses, n = models._strings("mse")
    with pytest.raises(ValueError, match=r"unknown key 'loss_weight' \(did you mean "
                                         r"'loss_weights'\?\); the compile options are"):
        models._call("model_compile", m._h, b"sgd", losses, n, None, 0, b'{"loss_weight": [1]}')
    with pytest.raises(ValueError, match="option 'shuffle' must be a bool, not a string"):
        m.compile("sgd", "mse")
        history = models.ctypes.c_char_p()
        x = models._Arrays(np.zeros((2, 3), np.float32))
        models._call("model_fit", m._h, x.handles, x.count, x.handles, x.count, 2, 1, 0,
                     b'{"shuffle": "yes"}', models._CALLBACK(), None,
                     models.ctypes.byref(history))


def test_file_errors_are_oserrors(tmp_path):
    """A missing file is FileNotFoundError, a file that cannot be written OSError (the statuses
    of api/kbackend.toml's [errors]), each with its status."""
    with pytest.raises(FileNotFoundError, match="no such file") as missing:
        models.load_model(str(tmp_path / "none.h5"))
    assert missing.value.status == 10
    m = models.model_from_json(DENSE)
    with pytest.raises(OSError, match="cannot be created") as unwritable:
        m.save(str(tmp_path / "no" / "folder" / "m.h5"))
    assert unwritable.value.status == 11 and not isinstance(unwritable.value, FileNotFoundError)


def test_a_model_function_without_a_method_reaches_python():
    """kb_model_count_params has no method of its own: Model.__getattr__ calls it through the
    generated signatures (a new kb_model_* function needs no Python code)."""
    m = models.model_from_json(DENSE)
    assert m.count_params() == 3 * 2 + 2
    with pytest.raises(AttributeError, match="no attribute 'no_such_function'"):
        m.no_such_function()
