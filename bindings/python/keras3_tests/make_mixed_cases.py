"""Keras 3's half of the mixed-precision checks of bindings/python/keras3_tests/run.sh (run in
the Keras 3 venv): models built under the mixed_bfloat16 policy (float32 variables, bfloat16
computation; the last layer float32, as Keras' mixed-precision guide has it, or bfloat16),
compiled with SGD on mse, saved as OUT/NAME.keras before training, with what kbackend must find
in OUT/expected.npz: the inputs, targets, Keras' predictions (as float32), and after two epochs
of fit (batch 8, no shuffling) its losses and weights. Usage: python make_mixed_cases.py OUT"""
import os
import sys
import zlib

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers


def mlp():
    x = keras.Input((12,))
    h = L.Dense(32, activation="relu")(x)
    h = L.Dense(16, activation="gelu")(h)
    return keras.Model(x, L.Dense(3, dtype="float32")(h))


def mlp_bf16_output():
    x = keras.Input((12,))
    return keras.Model(x, L.Dense(3)(L.Dense(16, activation="tanh")(x)))


def cnn():
    x = keras.Input((10, 10, 3))
    h = L.Conv2D(8, 3, padding="same", activation="relu")(x)
    h = L.BatchNormalization()(h)
    h = L.MaxPooling2D()(h)
    h = L.DepthwiseConv2D(3, padding="same")(h)
    h = L.Conv2D(8, 1, activation="relu")(h)
    h = L.GlobalAveragePooling2D()(h)
    h = L.Dense(3)(h)
    return keras.Model(x, L.Activation("softmax", dtype="float32")(h))


def transformer():
    x = keras.Input((8,))
    tok = L.Embedding(20, 16)(x)
    a = L.MultiHeadAttention(num_heads=2, key_dim=8)(tok, tok)
    h = L.LayerNormalization(epsilon=1e-6)(tok + a)
    f = L.Dense(16)(L.Dense(32, activation="gelu")(h))
    h = L.LayerNormalization(epsilon=1e-6)(h + f)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(x, L.Dense(3, activation="softmax", dtype="float32")(h))


def recurrent():
    x = keras.Input((5, 4))
    h = L.LSTM(8, return_sequences=True)(x)
    h = L.GRU(6)(h)
    return keras.Model(x, L.Dense(3, dtype="float32")(h))


def normalizations():
    x = keras.Input((6, 8))
    h = L.Conv1D(8, 3, padding="same")(x)
    h = L.GroupNormalization(groups=2)(h)
    h = L.RMSNormalization()(h)
    h = L.Flatten()(L.Dropout(0.0)(h))
    return keras.Model(x, L.Dense(3, dtype="float32")(h))


CASES = {"mlp": mlp, "mlp_bf16_output": mlp_bf16_output, "cnn": cnn,
         "transformer": transformer, "recurrent": recurrent, "normalizations": normalizations}


def inputs_for(name, model, n=16):
    rng = np.random.RandomState(zlib.crc32(name.encode()) % 1000)
    shape = (n,) + tuple(model.inputs[0].shape[1:])
    if name == "transformer":
        x = rng.randint(0, 20, shape).astype(np.float32)
    else:
        x = rng.randn(*shape).astype(np.float32)
    return x, rng.rand(n, 3).astype(np.float32)


def main(out):
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    expected = {}
    for name, make in CASES.items():
        keras.utils.set_random_seed(1)
        model = make()
        model.compile(keras.optimizers.SGD(0.05, momentum=0.5), "mse")
        x, y = inputs_for(name, model)
        model.save(os.path.join(out, name + ".keras"))
        expected[name + "/x0"] = x
        expected[name + "/y"] = y
        pred = model.predict(x, verbose=0)
        expected[name + "/pred_dtype"] = np.array(str(pred.dtype))
        expected[name + "/pred"] = pred.astype(np.float32)
        history = model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0)
        expected[name + "/losses"] = np.asarray(history.history["loss"])
        for i, w in enumerate(model.get_weights()):
            expected[name + "/w%d" % i] = w.astype(np.float32)
    np.savez(os.path.join(out, "expected.npz"), **expected)
    print("Keras %s made %d mixed_bfloat16 cases" % (keras.__version__, len(CASES)))


if __name__ == "__main__":
    main(sys.argv[1])
