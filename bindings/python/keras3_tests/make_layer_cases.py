"""Keras 3's half of the layer checks of bindings/python/keras3_tests/run.sh (run in the
Keras 3 venv): for each layer Keras added after 2.2.4, a small model with it, compiled with SGD
on mse, saved as OUT/NAME.keras before training, with what kbackend must find in
OUT/expected.npz: the inputs, targets, Keras' predictions and, after two epochs of fit (batch
8, no shuffling), its losses and weights (for keras.applications' models, after one step on
the first 8 samples). Models whose layers draw random numbers in training (dropout,
augmentations) record predictions alone. Usage: python make_layer_cases.py OUT [NAME...]"""
import os
import sys
import warnings
import zlib

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from application_cases import APPLICATIONS  # noqa: E402

L = keras.layers
# Keras warns that a list of one input differs from its structure: not the layers' business.
warnings.filterwarnings("ignore", category=UserWarning)


def seq(shape, *stack, dtype=None):
    """Input(shape, dtype) -> stack -> Flatten (when needed) -> Dense(2)."""
    x = inp = keras.Input(shape, dtype=dtype)
    for layer in stack:
        x = layer(x)
    if len(x.shape) > 2:
        x = L.Flatten()(x)
    return keras.Model(inp, L.Dense(2)(x))


def attention(build, shapes):
    """Inputs of `shapes` -> build(*inputs) -> Flatten -> Dense(2)."""
    ins = [keras.Input(s) for s in shapes]
    y = build(*ins)
    return keras.Model(ins, L.Dense(2)(L.Flatten()(y)))


def tokens_mha(**call):
    """Embedding with mask_zero -> self-attention -> masked average -> Dense(2)."""
    x = keras.Input((6,))
    e = L.Embedding(10, 8, mask_zero=True)(x)
    h = L.MultiHeadAttention(2, 4)(e, e, **call)
    return keras.Model(x, L.Dense(2)(L.GlobalAveragePooling1D()(h)))


def transformer_classifier():
    """A transformer encoder block on token ids: the text classifier of Keras' examples."""
    x = keras.Input((8,))
    tok = L.Embedding(20, 16)(x)
    pos = L.Embedding(8, 16)(keras.ops.arange(8))
    h = tok + pos
    a = L.MultiHeadAttention(num_heads=2, key_dim=8)(h, h)
    h = L.LayerNormalization(epsilon=1e-6)(h + a)
    f = L.Dense(16)(L.Dense(32, activation="gelu")(h))
    h = L.LayerNormalization(epsilon=1e-6)(h + f)
    h = L.GlobalAveragePooling1D()(h)
    return keras.Model(x, L.Dense(2, activation="softmax")(h))


ACTIVATIONS = ["gelu", "silu", "swish", "mish", "relu6", "hard_sigmoid", "hard_silu",
               "hard_swish", "leaky_relu", "celu", "log_softmax", "log_sigmoid", "tanh_shrink",
               "hard_tanh", "soft_shrink", "hard_shrink", "sparse_plus", "sparse_sigmoid",
               "squareplus", "elu", "selu", "softplus", "softsign", "exponential"]

CASES = {"activation " + a: (lambda a=a: seq((6,), L.Dense(5, activation=a))) for a in ACTIVATIONS}
CASES.update({
    "Activation gelu layer": lambda: seq((6,), L.Dense(5), L.Activation("gelu")),
    "LayerNormalization": lambda: seq((6,), L.Dense(5), L.LayerNormalization()),
    "LayerNormalization 3-D axes": lambda: seq((4, 3), L.LayerNormalization(axis=[1, 2],
                                                                            epsilon=1e-5)),
    "LayerNormalization no center": lambda: seq((4, 3), L.LayerNormalization(center=False)),
    "RMSNormalization": lambda: seq((4, 3), L.RMSNormalization()),
    "UnitNormalization": lambda: seq((6,), L.Dense(5), L.UnitNormalization()),
    "GroupNormalization": lambda: seq((6,), L.Dense(6), L.GroupNormalization(groups=3)),
    "GroupNormalization 3-D": lambda: seq((5, 4), L.GroupNormalization(groups=2)),
    "GroupNormalization instance": lambda: seq((3, 3, 4), L.GroupNormalization(groups=-1)),
    "EinsumDense ab,bc->ac": lambda: seq((6,), L.EinsumDense("ab,bc->ac", 4, bias_axes="c")),
    "EinsumDense abc,cd->abd": lambda: seq((3, 6), L.EinsumDense("abc,cd->abd", (3, 4),
                                                                 bias_axes="d")),
    "EinsumDense abc,cde->abde": lambda: seq((3, 6), L.EinsumDense("abc,cde->abde",
                                                                   (3, 2, 4), bias_axes="de")),
    "EinsumDense ...b,bc->...c": lambda: seq((3, 6), L.EinsumDense("...b,bc->...c", 4)),
    "EinsumDense abc,cd->abd gelu": lambda: seq((3, 6), L.EinsumDense(
        "abc,cd->abd", (3, 4), activation="gelu")),
    "MultiHeadAttention self": lambda: attention(
        lambda q: L.MultiHeadAttention(2, 4)(q, q), [(5, 8)]),
    "MultiHeadAttention cross": lambda: attention(
        lambda q, v: L.MultiHeadAttention(2, 3)(q, v), [(4, 6), (5, 7)]),
    "MultiHeadAttention key": lambda: attention(
        lambda q, v, k: L.MultiHeadAttention(3, 2)(q, v, key=k), [(4, 6), (5, 7), (5, 3)]),
    "MultiHeadAttention causal": lambda: attention(
        lambda q: L.MultiHeadAttention(2, 4)(q, q, use_causal_mask=True), [(5, 8)]),
    "MultiHeadAttention no bias output_shape": lambda: attention(
        lambda q: L.MultiHeadAttention(2, 4, use_bias=False, output_shape=(3,))(q, q), [(5, 8)]),
    "MultiHeadAttention 2-D attention axes": lambda: attention(
        lambda q: L.MultiHeadAttention(2, 3, attention_axes=(1, 2))(q, q), [(3, 4, 5)]),
    "MultiHeadAttention attention_mask": lambda: attention(
        lambda q, m: L.MultiHeadAttention(2, 4)(q, q, attention_mask=m), [(5, 8), (5, 5)]),
    "MultiHeadAttention masked tokens": lambda: tokens_mha(),
    "MultiHeadAttention masked tokens causal": lambda: tokens_mha(use_causal_mask=True),
    "transformer text classifier": transformer_classifier,
})

def applications_layer(module, cls, *args, **kwargs):
    """One of the layers keras.applications defines for its models (ConvNeXt's LayerScale)."""
    import importlib
    return getattr(importlib.import_module("keras.src.applications." + module), cls)(*args,
                                                                                     **kwargs)


def scaled_residual():
    """InceptionResNetV2's block ending: x + scale * r (CustomScaleLayer)."""
    x = keras.Input((6,))
    r = L.Dense(6, activation="tanh")(x)
    y = applications_layer("inception_resnet_v2", "CustomScaleLayer", 0.17)([x, r])
    return keras.Model(x, L.Dense(2)(y))


CASES.update({
    "Rescaling": lambda: seq((6,), L.Rescaling(1.0 / 255, offset=-0.5)),
    "Rescaling per channel": lambda: seq((4, 3), L.Rescaling([0.5, 2.0, -1.0], offset=0.1)),
    "Normalization adapted": lambda: seq((4, 3), L.Normalization(axis=-1)),
    "Normalization given": lambda: seq((4, 3), L.Normalization(mean=[1.0, 2.0, 3.0],
                                                                variance=[4.0, 0.25, 9.0])),
    "Normalization invert": lambda: seq((6,), L.Normalization(mean=0.5, variance=2.0,
                                                              invert=True)),
    "Identity": lambda: seq((6,), L.Dense(5), L.Identity()),
    "GlobalAveragePooling2D keepdims": lambda: seq((4, 4, 3), L.GlobalAveragePooling2D(
        keepdims=True)),
    "LayerScale": lambda: seq((4, 3), applications_layer("convnext", "LayerScale", 0.1, 3)),
    "CustomScaleLayer": scaled_residual,
})


def ids(shape, *stack):
    """seq() on an int32 Input: the ids of the tokens generator, some past the layer's range."""
    return seq(shape, *stack, dtype="int32")


CASES.update({
    "ConvLSTM1D": lambda: seq((3, 6, 2), L.ConvLSTM1D(3, 3, padding="same")),
    "ConvLSTM1D channels_first": lambda: seq((3, 2, 6), L.ConvLSTM1D(
        2, 2, data_format="channels_first", return_sequences=True)),
    "ConvLSTM2D": lambda: seq((3, 5, 5, 2), L.ConvLSTM2D(2, 3, strides=2)),
    "ConvLSTM3D": lambda: seq((2, 4, 4, 3, 2), L.ConvLSTM3D(2, 2, return_sequences=True,
                                                            dilation_rate=(1, 2, 1))),
})

CASES.update({
    "SpectralNormalization Dense": lambda: seq((6,), L.SpectralNormalization(L.Dense(4))),
    "SpectralNormalization Conv2D": lambda: seq((5, 5, 2), L.SpectralNormalization(
        L.Conv2D(3, 3, activation="tanh"), power_iterations=3)),
})

# LoRA: Keras keeps the kernel merged and neither factor, zeros once the file is read, so the
# expected training is that of the model Keras loads from the file.
CASES.update({
    "Dense LoRA": lambda: seq((6,), L.Dense(5, lora_rank=2, activation="tanh")),
    "Embedding LoRA tokens": lambda: ids((6,), L.Embedding(10, 4, lora_rank=3, lora_alpha=6.0)),
    "EinsumDense LoRA": lambda: seq((3, 4), L.EinsumDense("abc,cde->abde", (3, 2, 5),
                                                          bias_axes="de", lora_rank=2)),
})

BINS = [-0.5, 0.0, 0.5, 1.25]
CASES.update({
    "CategoryEncoding multi_hot tokens": lambda: ids((4,), L.CategoryEncoding(8)),
    "CategoryEncoding count tokens": lambda: ids((4,), L.CategoryEncoding(8, "count")),
    "CategoryEncoding one_hot tokens": lambda: ids((4,), L.CategoryEncoding(8, "one_hot")),
    "CategoryEncoding one_hot of a column tokens": lambda: ids(
        (1,), L.CategoryEncoding(10, "one_hot")),
    "Discretization": lambda: seq((3,), L.Discretization(BINS), L.Embedding(5, 3)),
    "Discretization one_hot": lambda: seq((3,), L.Discretization(BINS, output_mode="one_hot")),
    "Discretization multi_hot": lambda: seq((3,), L.Discretization(BINS,
                                                                   output_mode="multi_hot")),
    "Discretization count": lambda: seq((3,), L.Discretization(BINS, output_mode="count")),
})

def tokens_attention(layer, **call):
    """Embedding with mask_zero -> layer([e, e]) -> masked average -> Dense(2)."""
    x = keras.Input((6,))
    e = L.Embedding(10, 4, mask_zero=True)(x)
    h = layer([e, e], **call)
    return keras.Model(x, L.Dense(2)(L.GlobalAveragePooling1D()(h)))


CASES.update({
    "Attention": lambda: attention(lambda q, v: L.Attention()([q, v]), [(4, 3), (5, 3)]),
    "Attention scaled key": lambda: attention(
        lambda q, v, k: L.Attention(use_scale=True)([q, v, k]), [(4, 3), (5, 2), (5, 3)]),
    "Attention concat": lambda: attention(
        lambda q, v: L.Attention(score_mode="concat", use_scale=True)([q, v]), [(4, 3), (5, 3)]),
    "Attention causal": lambda: attention(
        lambda q: L.Attention()([q, q], use_causal_mask=True), [(5, 3)]),
    "Attention masked tokens": lambda: tokens_attention(L.Attention()),
    "AdditiveAttention": lambda: attention(lambda q, v: L.AdditiveAttention()([q, v]),
                                           [(4, 3), (5, 3)]),
    "AdditiveAttention masked tokens causal": lambda: tokens_attention(
        L.AdditiveAttention(use_scale=False), use_causal_mask=True),
    "Conv1D groups": lambda: seq((8, 4), L.Conv1D(6, 3, groups=2)),
    "Conv2D groups": lambda: seq((6, 6, 4), L.Conv2D(4, 3, groups=4, padding="same")),
    "Conv1DTranspose": lambda: seq((5, 3), L.Conv1DTranspose(2, 3, strides=2)),
    "Conv1DTranspose same": lambda: seq((5, 3), L.Conv1DTranspose(2, 3, strides=2,
                                                                  padding="same")),
    "DepthwiseConv1D": lambda: seq((8, 3), L.DepthwiseConv1D(3, depth_multiplier=2)),
    "DepthwiseConv1D strided": lambda: seq((9, 3), L.DepthwiseConv1D(3, strides=2,
                                                                     padding="same")),
})

def keras_ops():
    """keras.ops calls in a functional model: indexing, reductions, shapes, concatenation."""
    ops = keras.ops
    x = keras.Input((5, 4))
    h = L.Dense(4, activation="tanh")(x)
    parts = [h[:, 0], h[:, -1], ops.mean(h, axis=1), ops.max(h, axis=1),
             ops.reshape(ops.transpose(h[:, 1:3, ::2], (0, 2, 1)), (-1, 4)),
             ops.squeeze(ops.expand_dims(h[..., -1], 1), 1), ops.sum(h * 0.5 - 1.0, axis=(1,))]
    y = ops.concatenate(parts, axis=-1)
    return keras.Model(x, L.Dense(2)(ops.sqrt(ops.square(y) + 1.0) / 2.0))


CASES["keras.ops calls"] = keras_ops


def gqa(**kwargs):
    return L.GroupQueryAttention(head_dim=3, num_query_heads=4, num_key_value_heads=2, **kwargs)


CASES.update({
    "GroupQueryAttention self": lambda: attention(lambda q: gqa()(q, q), [(5, 6)]),
    "GroupQueryAttention key causal": lambda: attention(
        lambda q, v, k: gqa()(q, v, key=k, use_causal_mask=True), [(5, 6), (5, 6), (5, 6)]),
    "GroupQueryAttention gate no bias": lambda: attention(
        lambda q, v: gqa(use_gate=True, use_bias=False)(q, v), [(4, 6), (5, 6)]),
    "GroupQueryAttention masked tokens": lambda: tokens_attention(
        lambda ins: gqa()(ins[0], ins[1])),
})

CASES.update({
    "Resizing bilinear up": lambda: seq((4, 5, 2), L.Resizing(7, 9)),
    "Resizing bilinear down": lambda: seq((9, 7, 2), L.Resizing(4, 3)),
    "Resizing nearest": lambda: seq((5, 4, 2), L.Resizing(8, 3, interpolation="nearest")),
    "Resizing crop_to_aspect_ratio": lambda: seq((6, 9, 2), L.Resizing(
        4, 4, crop_to_aspect_ratio=True)),
    "Resizing bicubic": lambda: seq((4, 9, 2), L.Resizing(7, 5, interpolation="bicubic")),
    "Resizing lanczos3": lambda: seq((5, 9, 2), L.Resizing(8, 4, interpolation="lanczos3")),
    "Resizing lanczos5": lambda: seq((11, 4, 2), L.Resizing(6, 7, interpolation="lanczos5")),
    "Resizing bilinear antialias": lambda: seq((9, 7, 2), L.Resizing(4, 3, antialias=True)),
    "Resizing bicubic antialias": lambda: seq((10, 12, 2), L.Resizing(
        4, 5, interpolation="bicubic", antialias=True)),
    "Resizing pad_to_aspect_ratio rows": lambda: seq((3, 8, 2), L.Resizing(
        4, 4, pad_to_aspect_ratio=True, fill_value=0.5)),
    "Resizing pad_to_aspect_ratio columns": lambda: seq((7, 3, 2), L.Resizing(
        5, 4, pad_to_aspect_ratio=True)),
    "Resizing pad_to_aspect_ratio channels_first": lambda: seq((2, 3, 8), L.Resizing(
        4, 4, pad_to_aspect_ratio=True, fill_value=-1.0, data_format="channels_first")),
    "CenterCrop": lambda: seq((7, 6, 2), L.CenterCrop(4, 3)),
    "CenterCrop smaller": lambda: seq((3, 5, 2), L.CenterCrop(4, 4)),
})

CASES.update({
    "AdaptiveAveragePooling1D": lambda: seq((7, 3), L.AdaptiveAveragePooling1D(3)),
    "AdaptiveAveragePooling2D": lambda: seq((7, 5, 2), L.AdaptiveAveragePooling2D((3, 2))),
    "AdaptiveAveragePooling3D": lambda: seq((4, 5, 3, 2), L.AdaptiveAveragePooling3D((2, 3, 2))),
    "AdaptiveMaxPooling1D": lambda: seq((7, 3), L.AdaptiveMaxPooling1D(3)),
    "AdaptiveMaxPooling2D": lambda: seq((7, 5, 2), L.AdaptiveMaxPooling2D((3, 2))),
    "AdaptiveMaxPooling3D": lambda: seq((4, 5, 3, 2), L.AdaptiveMaxPooling3D((2, 3, 2))),
})

CASES.update({name: make for name, (make, _) in APPLICATIONS.items()})

RANDOM_IN_TRAINING = {
    "MultiHeadAttention dropout": lambda: attention(
        lambda q: L.MultiHeadAttention(2, 4, dropout=0.3)(q, q), [(5, 8)]),
    "RandomFlip": lambda: seq((6, 5, 3), L.RandomFlip(seed=3)),
    "RandomFlip horizontal": lambda: seq((6, 5, 3), L.RandomFlip("horizontal")),
    "RandomBrightness": lambda: seq((6, 5, 3), L.RandomBrightness(0.2, value_range=(0, 1))),
    "RandomContrast": lambda: seq((6, 5, 3), L.RandomContrast((0.1, 0.3), value_range=(0, 1))),
}

# Identity in inference; kbackend refuses to train through them (their transforms are not drawn).
INFERENCE_ONLY = {
    "RandomRotation": lambda: seq((6, 5, 3), L.RandomRotation(0.1)),
    "RandomZoom": lambda: seq((6, 5, 3), L.RandomZoom(0.2)),
}


def inputs_for(name, model, n=16):
    rng = np.random.RandomState(zlib.crc32(name.encode()) % 1000)
    xs = []
    for inp in model.inputs:
        shape = (n,) + tuple(inp.shape[1:])
        if "tokens" in name or "transformer" in name:
            x = rng.randint(1, 10, shape).astype(np.float32)
            for i in range(n):  # padding at the tail of some rows
                x[i, shape[1] - i % 3:] = 0
            xs.append(x)
        elif name in APPLICATIONS:
            pixels = APPLICATIONS[name][1]
            xs.append((rng.rand(*shape) * (255 if pixels else 2) - (0 if pixels else 1))
                      .astype(np.float32))
        elif name.startswith("Random"):
            xs.append(rng.rand(*shape).astype(np.float32))
        elif "attention_mask" in name and len(xs) == 1:
            xs.append((rng.rand(*shape) > 0.3).astype(np.float32))
        else:
            xs.append(rng.randn(*shape).astype(np.float32))
    return xs, rng.rand(n, 2).astype(np.float32)


def key(name):
    return name.replace(" ", "_").replace("/", "_").replace(",", "_").replace(">", "")


def main(out, names):
    expected = {}
    for name, make in (list(CASES.items()) + list(RANDOM_IN_TRAINING.items()) +
                       list(INFERENCE_ONLY.items())):
        if names and name not in names:
            continue
        keras.utils.set_random_seed(1)
        model = make()
        model.compile(keras.optimizers.SGD(0.05, momentum=0.5), "mse")
        xs, y = inputs_for(name, model)
        k = key(name)
        model.save(os.path.join(out, k + ".keras"))
        if "LoRA" in name:
            model = keras.saving.load_model(os.path.join(out, k + ".keras"))
        for i, x in enumerate(xs):
            expected[k + "/x%d" % i] = x
        expected[k + "/y"] = y
        expected[k + "/pred"] = model.predict(xs, verbose=0)
        if name in INFERENCE_ONLY:
            expected[k + "/inference_only"] = np.ones(1)
        if name in APPLICATIONS:  # one step: their training from scratch amplifies rounding
            expected[k + "/step_loss"] = np.asarray(model.train_on_batch(
                [x[:8] for x in xs], y[:8]))
            for i, w in enumerate(model.get_weights()):
                expected[k + "/w%d" % i] = w
        elif name in CASES:
            history = model.fit(xs, y, epochs=2, batch_size=8, shuffle=False, verbose=0)
            expected[k + "/losses"] = np.asarray(history.history["loss"])
            for i, w in enumerate(model.get_weights()):
                expected[k + "/w%d" % i] = w
    np.savez(os.path.join(out, "expected.npz"), **expected)
    cases = {n.split("/")[0] for n in expected}
    print("Keras %s made %d layer cases" % (keras.__version__, len(cases)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
