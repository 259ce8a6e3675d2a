"""A model file is untrusted input: hostile HDF5 files (written with h5py), `.keras` archives
(written with zipfile) and configs ask for what they cannot have, and each load fails at once
with a clear error naming the file and the layer, nothing allocated that the file does not
confirm and nothing from the file executed: configs nested past any real model's depth, models
nested in models, layers far larger than the weights their file holds (an LSTM of 5,000 units,
a Dense layer of 1e8), datasets that declare values the file does not store, zip bombs and
members outside the archive, Lambda layers, weights of the wrong shape."""
import json
import zipfile

import numpy as np
import pytest

# The hostile files are written with h5py (Debian's python3-h5py in the main run; a venv of the
# wheel alone has none).
h5py = pytest.importorskip("h5py")

from kbackend import models
from model_fixtures import ModelFixtures

KERAS3 = ModelFixtures("keras3")


def _sequential(layers):
    return {"class_name": "Sequential", "config": {"name": "s", "layers": layers}}


def _dense(name, units, shape=None):
    config = {"name": name, "units": units, "activation": "linear"}
    if shape is not None:
        config["batch_input_shape"] = shape
    return {"class_name": "Dense", "config": config}


def _saved(tmp_path, config, name="m.h5"):
    path = str(tmp_path / name)
    models.model_from_json(json.dumps(config)).save(path)
    return path


def _set_config(path, config):
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = json.dumps(config)


def test_configs_nested_past_any_model_are_refused(tmp_path):
    deep = '{"a": ' * 100000 + "1" + "}" * 100000
    with pytest.raises(ValueError, match="nested more than 512 levels"):
        models.model_from_json(deep)
    path = _saved(tmp_path, _sequential([_dense("d", 2, [None, 3])]))
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = deep
    with pytest.raises(ValueError, match="nested more than 512 levels") as e:
        models.load_model(path)
    assert path in str(e.value)


def _nested(depth):
    config = _sequential([_dense("d", 2, [None, 3])])
    for i in range(depth):
        inner = dict(config["config"], name="s%d" % i, batch_input_shape=[None, 3])
        config = _sequential([{"class_name": "Sequential", "config": inner}])
    return config


def test_models_nested_in_models_are_bounded():
    model = models.model_from_json(json.dumps(_nested(5)))
    assert model.predict(np.ones((1, 3), np.float32)).shape == (1, 2)
    with pytest.raises(ValueError, match="models nested more than 32 deep"):
        models.model_from_json(json.dumps(_nested(40)))


def test_layers_larger_than_their_file_fail_before_allocating(tmp_path):
    lstm = {"class_name": "LSTM", "config": {"name": "lstm", "units": 4,
                                             "batch_input_shape": [None, 3, 2]}}
    path = _saved(tmp_path, _sequential([lstm]))
    lstm["config"]["units"] = 5000  # 400 MB of recurrent kernel; Orthogonal would take seconds
    _set_config(path, _sequential([lstm]))
    with pytest.raises(ValueError, match="recurrent_kernel.*needs 381.5 MiB, more than the "
                                         "file's weights") as e:
        models.load_model(path)
    assert path in str(e.value) and "layer 'lstm' (LSTM)" in str(e.value)
    path = _saved(tmp_path, _sequential([_dense("d", 2, [None, 784])]), "dense.h5")
    _set_config(path, _sequential([_dense("d", 100000000, [None, 784])]))
    with pytest.raises(ValueError, match="weight 'kernel' of shape \\(784, 100000000\\) needs "
                                         "292.1 GiB") as e:
        models.load_model(path)
    assert path in str(e.value)
    # A config alone may ask for what the host has, and no more.
    with pytest.raises(ValueError, match="more than this host's memory"):
        models.model_from_json(json.dumps(_sequential([_dense("d", 10 ** 12, [None, 784])])))


def test_datasets_must_be_stored_and_shaped_as_the_layer_needs(tmp_path):
    path = _saved(tmp_path, _sequential([_dense("d", 2, [None, 3])]))
    with h5py.File(path, "r+") as f:
        group = f["model_weights/d"]
        kernel = [n.decode() for n in group.attrs["weight_names"]][0]
        del group[kernel]
        group.create_dataset(kernel, shape=(3, 2), dtype="f4")  # declared, never written
    with pytest.raises(ValueError, match="declares 24 bytes of values, but the file holds 0"):
        models.load_model(path)
    with h5py.File(path, "r+") as f:
        del f["model_weights/d"][kernel]
        f["model_weights/d"][kernel] = np.ones((4096, 4096), np.float32)
    with pytest.raises(ValueError, match="has shape \\(4096, 4096\\) in the file, the layer "
                                         "needs \\(3, 2\\)"):
        models.load_model(path)


def test_a_wrapped_layer_without_a_string_name_is_the_files_fault(tmp_path):
    inner = {"class_name": "LSTM", "config": {"name": 7, "units": 2}}
    bidirectional = {"class_name": "Bidirectional",
                     "config": {"name": "bi", "layer": inner, "merge_mode": "concat",
                                "batch_input_shape": [None, 3, 2]}}
    with pytest.raises(ValueError, match="'name' is not a string"):
        models.model_from_json(json.dumps(_sequential([bidirectional])))


def _archive(tmp_path, entries, compression=zipfile.ZIP_STORED):
    path = str(tmp_path / "hostile.keras")
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def _mlp_entries():
    good = zipfile.ZipFile(KERAS3.path("mlp.keras"))
    return {"config.json": good.read("config.json"),
            "model.weights.h5": good.read("model.weights.h5")}


def test_archives_that_ask_too_much_are_refused(tmp_path):
    entries = _mlp_entries()
    bomb = dict(entries, **{"model.weights.h5": bytes(200 << 20)})  # 200 KB deflated
    path = _archive(tmp_path, bomb, zipfile.ZIP_DEFLATED)
    with pytest.raises(ValueError, match="for a model whose weights take") as e:
        models.load_model(path)
    assert path in str(e.value)
    path = _archive(tmp_path, dict(entries, **{"../../outside.txt": b"x"}))
    with pytest.raises(ValueError, match="'../../outside.txt' names a path outside the archive"):
        models.load_model(path)


def test_lambda_layers_in_archives_are_refused_not_run(tmp_path):
    entries = _mlp_entries()
    config = json.loads(entries["config.json"])
    marker = tmp_path / "ran"
    code = "import pathlib; pathlib.Path(%r).write_text('ran')" % str(marker)
    config["config"]["layers"].insert(1, {
        "module": "keras.layers", "class_name": "Lambda", "registered_name": None,
        "config": {"name": "lambda", "function": {"class_name": "__lambda__",
                                                  "config": {"code": code}}}})
    path = _archive(tmp_path, dict(entries, **{"config.json": json.dumps(config)}))
    with pytest.raises(NotImplementedError, match="layer 'lambda': class 'Lambda'"):
        models.load_model(path)
    assert not marker.exists()


def test_archive_weights_of_the_wrong_shape_name_the_layer(tmp_path):
    entries = _mlp_entries()
    weights = str(tmp_path / "w.h5")
    with open(weights, "wb") as f:
        f.write(entries["model.weights.h5"])
    with h5py.File(weights, "r+") as f:
        del f["layers/dense/vars/0"]
        f["layers/dense/vars/0"] = np.zeros((9, 16), np.float32)
    with open(weights, "rb") as f:
        entries["model.weights.h5"] = f.read()
    path = _archive(tmp_path, entries)
    with pytest.raises(ValueError, match="shape \\(9, 16\\) for weight .* of layer 'dense' "
                                         "\\(Dense\\), which needs \\(8, 16\\)") as e:
        models.load_model(path)
    assert path in str(e.value)


def _heap_reference(data, length):
    """Where a file's reference to a heap string of `length` bytes lies: its length (4 bytes),
    the collection's address (8), its index (4), as HDF5 stores a variable-length string."""
    for collection in range(data.find(b"GCOL"), len(data), 4096):
        if data[collection:collection + 4] != b"GCOL":
            continue
        ref = length.to_bytes(4, "little") + collection.to_bytes(8, "little")
        at = data.find(ref)
        if at >= 0:
            return at, collection
    raise AssertionError("no heap reference found")


def test_damaged_heap_strings_fail_without_reaching_libhdf5(tmp_path):
    """libhdf5 1.10 crashes on these (a reference's index past its collection, an object's
    size past it): the library checks them itself."""
    path = _saved(tmp_path, _sequential([_dense("d", 2, [None, 3])]))
    config = json.dumps(_sequential([_dense("d", 2, [None, 3])]))
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = config  # a variable-length string, as h5py writes str
    assert models.load_model(path).predict(np.ones((1, 3), np.float32)).shape == (1, 2)
    with open(path, "rb") as f:
        data = f.read()
    at, collection = _heap_reference(data, len(config.encode()))
    damaged = {
        "index": (at + 12, (0x7FFFFFFF).to_bytes(4, "little")),
        "object size": (collection + 24, (0x7FFFFFFFFFFF).to_bytes(8, "little")),
        "address": (at + 4, (16).to_bytes(8, "little")),
    }
    for what, (offset, patch) in damaged.items():
        bad = bytearray(data)
        bad[offset:offset + len(patch)] = patch
        bad_path = str(tmp_path / ("damaged %s.h5" % what))
        with open(bad_path, "wb") as f:
            f.write(bad)
        with pytest.raises(ValueError, match="attribute model_config") as e:
            models.load_model(bad_path)
        assert bad_path in str(e.value), what
