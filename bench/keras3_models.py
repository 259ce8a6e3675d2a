"""Keras 3 models, natively and in Keras 3, side by side: a transformer text classifier and
EfficientNetB0 saved by Keras 3 (weights=None), each predicted at batch 1 and 32 and trained a
step at batch 32, milliseconds per call (the median of the calls after warm-up ones).

    KERAS_BACKEND=jax ~/.cache/kb-keras3/bin/python bench/keras3_models.py make DIR
    for r in 1 2 3; do for m in transformer efficientnetb0; do
      KERAS_BACKEND=jax ~/.cache/kb-keras3/bin/python bench/keras3_models.py keras DIR $m
      PYTHONPATH=build-bind/bindings/python /usr/bin/python3 bench/keras3_models.py kbackend DIR $m
    done; done

The Keras 3 venv is keras3_tests/run.sh's (Keras 3.15.1 on JAX 0.10.2); Keras runs its
compiled (jit) predict_on_batch and train_on_batch, kbackend its own."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_common import call_ms  # noqa: E402

SEQUENCE, VOCAB, IMAGE = 128, 2000, 128


def make(out):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras
    L = keras.layers
    keras.utils.set_random_seed(0)
    x = keras.Input((SEQUENCE,))
    h = L.Embedding(VOCAB, 64)(x) + L.Embedding(SEQUENCE, 64)(keras.ops.arange(SEQUENCE))
    for _ in range(2):  # two encoder blocks
        a = L.MultiHeadAttention(num_heads=4, key_dim=16)(h, h)
        h = L.LayerNormalization(epsilon=1e-6)(h + a)
        f = L.Dense(64)(L.Dense(128, activation="gelu")(h))
        h = L.LayerNormalization(epsilon=1e-6)(h + f)
    y = L.Dense(2, activation="softmax")(L.GlobalAveragePooling1D()(h))
    model = keras.Model(x, y)
    model.compile(keras.optimizers.Adam(1e-3), "sparse_categorical_crossentropy")
    model.save(os.path.join(out, "transformer.keras"))
    model = keras.applications.EfficientNetB0(weights=None, input_shape=(IMAGE, IMAGE, 3),
                                              classes=10)
    model.compile(keras.optimizers.SGD(0.01, momentum=0.9), "sparse_categorical_crossentropy")
    model.save(os.path.join(out, "efficientnetb0.keras"))


def data(name, n):
    rng = np.random.RandomState(n)
    if name == "transformer":
        x = rng.randint(0, VOCAB, (n, SEQUENCE)).astype(np.float32)
        return x, rng.randint(0, 2, (n, 1)).astype(np.float32)
    x = (rng.rand(n, IMAGE, IMAGE, 3) * 255).astype(np.float32)
    return x, rng.randint(0, 10, (n, 1)).astype(np.float32)


def median_ms(fn, calls):
    return float(np.median(call_ms(fn, calls)))


def measure(system, out, name):
    path = os.path.join(out, name + ".keras")
    if system == "keras":
        os.environ.setdefault("KERAS_BACKEND", "jax")
        import keras
        model = keras.saving.load_model(path)
        predict = lambda x: np.asarray(model.predict_on_batch(x))  # noqa: E731
        train = lambda x, y: model.train_on_batch(x, y)  # noqa: E731
        version = "Keras %s" % keras.__version__
    else:
        from kbackend import models
        model = models.load_model(path)
        predict = lambda x: model.predict_on_batch([x])  # noqa: E731
        train = lambda x, y: model.train_on_batch([x], [y])  # noqa: E731
        version = "kbackend"
    x1, _ = data(name, 1)
    x32, y32 = data(name, 32)
    calls = 5 if name == "efficientnetb0" else 20
    figures = [median_ms(lambda: predict(x1), calls * 2), median_ms(lambda: predict(x32), calls),
               median_ms(lambda: train(x32, y32), calls)]
    print("%-14s %-14s predict b1 %8.1f ms  predict b32 %8.1f ms  train step b32 %8.1f ms"
          % (name, version, *figures), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        measure(sys.argv[1], sys.argv[2], sys.argv[3])
