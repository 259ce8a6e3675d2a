"""Real architectures at batch 1 and 8: kbackend predicting the .keras file Keras 3 saved, and
ONNX Runtime running the ONNX file kbackend exports from that model (the same graph, the same
weights), milliseconds per call (median and minimum of the timed calls after warm-up ones).

    bash bench/real_models.sh [DIR]   # makes the models once, then alternates the systems

`make` and `ort` run in the Keras 3 venv of keras3_tests/run.sh (Keras 3.15.1 on JAX,
onnxruntime 1.23.2); `kbackend` (which also writes DIR/NAME.onnx when it is missing) in the
Python binding's; `kbackend-bf16` (the model under mixed_bfloat16: Model.with_dtype_policy)
in the Keras 3 venv, whose ml_dtypes holds its bfloat16 predictions. The models have random
weights (weights=None) and 224x224 inputs."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import call_ms  # noqa: E402

MODELS = ("resnet50", "mobilenetv2")
BATCHES = (1, 8)


def make(out):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras
    keras.utils.set_random_seed(0)
    for name, build in (("resnet50", keras.applications.ResNet50),
                        ("mobilenetv2", keras.applications.MobileNetV2)):
        path = os.path.join(out, name + ".keras")
        if not os.path.exists(path):
            build(weights=None, input_shape=(224, 224, 3)).save(path)


def measure(system, out, name):
    if system == "ort":
        import onnxruntime as ort
        session = ort.InferenceSession(os.path.join(out, name + ".onnx"),
                                       providers=["CPUExecutionProvider"])
        feed = session.get_inputs()[0].name
        predict = lambda x: session.run(None, {feed: x})  # noqa: E731
        version = "onnxruntime " + ort.__version__
    else:
        from kbackend import models
        model = models.load_model(os.path.join(out, name + ".keras"))
        if not os.path.exists(os.path.join(out, name + ".onnx")):
            model.export_onnx(os.path.join(out, name + ".onnx"))
        version = "kbackend"
        if system == "kbackend-bf16":  # the float32 model computed in bfloat16
            model = model.with_dtype_policy("mixed_bfloat16")
            version = "kbackend bf16"
        predict = lambda x: model.predict_on_batch([x])  # noqa: E731
    for batch in BATCHES:
        x = np.random.RandomState(batch).rand(batch, 224, 224, 3).astype(np.float32)
        ms = call_ms(lambda: predict(x), 20 if batch == 1 else 8)
        median, best = float(np.median(ms)), ms[0]
        print("%-12s %-20s batch %2d  median %7.1f ms  min %7.1f ms"
              % (name, version, batch, median, best), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        measure(sys.argv[1], sys.argv[2], sys.argv[3])
