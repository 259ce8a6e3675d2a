"""Model.export_onnx: each model file of tests/model_files (Keras 3's, tf.keras'), checked by
PyPI's onnx checker and run in ONNX Runtime against kbackend's predict (within 1e-4 relative and
1e-5 absolute), at two batch sizes; the refusals name the layer. The files are written (and
checked by ONNX's checker in the plugin) everywhere; they run where onnx and onnxruntime are
installed (bindings/python/keras3_tests/run.sh runs this file in its venv)."""
import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kbackend as K
import kbackend.models as M

try:
    import onnx
    import onnxruntime as ort
except ImportError:  # Debian's Python, the wheel's fresh venv: the files are written only
    onnx = ort = None

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_FILES = os.path.join(HERE, "..", "..", "..", "tests", "model_files")
FILES = os.path.join(MODEL_FILES, "keras3")
# The files whose layers compute with an operation the export has no ONNX form for yet: what the
# refusal names.
REFUSED = {}
NUMPY = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int32)": np.int32,
         "tensor(int64)": np.int64}


def model_files():  # of Keras 3, tf.keras' HDF5 files and tf.keras' archives
    return sorted(glob.glob(os.path.join(MODEL_FILES, folder, "*." + ext))
                  for folder in ("keras3", "tf_keras", "tf_keras_archives")
                  for ext in ("keras", "h5"))


def feeds(session, batch, rng):
    out = {}
    for i in session.get_inputs():
        shape = [batch if not isinstance(d, int) else d for d in i.shape]
        kind = NUMPY[i.type]
        out[i.name] = (rng.integers(0, 4, shape) if np.issubdtype(kind, np.integer)  # token ids
                       else rng.random(shape) * 4).astype(kind)  # ids as floats too
    return out


@pytest.mark.parametrize("path", [p for files in model_files() for p in files],
                         ids=lambda p: "/".join(p.split(os.sep)[-2:]))
def test_exported_models_run_in_onnx_runtime_as_predict(path, tmp_path):
    model = M.load_model(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    out = str(tmp_path / "model.onnx")
    if stem in REFUSED:
        with pytest.raises(NotImplementedError, match=REFUSED[stem].replace("(", r"\(")
                           .replace(")", r"\)")):
            model.export_onnx(out)
        assert not os.path.exists(out)
        return
    model.export_onnx(out)
    assert os.path.getsize(out) > 100
    if ort is None:
        return
    proto = onnx.load(out)
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version == 17
    assert len(proto.graph.input) == len(model.inputs)
    assert len(proto.graph.output) == len(model.outputs)
    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for batch in (1, 5):  # one graph for any batch
        feed = feeds(session, batch, rng)
        xs = [feed[i.name] for i in session.get_inputs()]
        want = model.predict(xs if len(xs) > 1 else xs[0])
        want = want if isinstance(want, list) else [want]
        got = session.run(None, feed)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_a_fixed_batch(tmp_path):
    model = M.load_model(os.path.join(FILES, "mlp.keras"))
    out = str(tmp_path / "mlp.onnx")
    model.export_onnx(out, batch_size=3)
    if ort is None:
        pytest.skip("no onnxruntime")
    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    assert session.get_inputs()[0].shape[0] == 3
    assert session.get_outputs()[0].shape[0] == 3


def test_refusals(tmp_path):
    model = M.load_model(os.path.join(FILES, "mlp.keras"))
    with pytest.raises(NotImplementedError, match="opset 18"):
        model.export_onnx(str(tmp_path / "m.onnx"), opset=18)
    with pytest.raises(OSError, match="cannot write"):
        model.export_onnx(str(tmp_path / "no" / "such" / "m.onnx"))
    # Without the plugin: a clear error, not a crash (a process of its own: the plugin stays
    # loaded once it is).
    code = ("import kbackend.models as M\n"
            "m = M.load_model(%r)\n"
            "try:\n    m.export_onnx(%r)\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n"
            % (os.path.join(FILES, "mlp.keras"), str(tmp_path / "m.onnx")))
    env = dict(os.environ, KB_ONNX_PLUGIN=str(tmp_path / "missing.so"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert "ONNX plugin" in out and "is not there" in out, out


def _gated(layer, config, inputs):
    """A layer of one's own from kbackend's functions: x * sigmoid(x W) + 0.5."""
    x = inputs[0]
    w = layer.add_weight("w", (x.shape[-1], x.shape[-1]), initializer="glorot_uniform")
    return x * K.sigmoid(K.dot(x, w)) + 0.5


def test_a_registered_python_layer_exports(tmp_path):
    M.register_layer("Gated", _gated)
    config = {"class_name": "Sequential", "config": {"name": "g", "layers": [
        {"class_name": "Gated", "config": {"name": "gated", "batch_input_shape": [None, 4]}}]}}
    model = M.model_from_json(json.dumps(config))
    out = str(tmp_path / "gated.onnx")
    model.export_onnx(out)
    if ort is None:
        return
    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).random((3, 4), dtype=np.float32)
    np.testing.assert_allclose(session.run(None, {session.get_inputs()[0].name: x})[0],
                               model.predict(x), rtol=1e-4, atol=1e-5)
