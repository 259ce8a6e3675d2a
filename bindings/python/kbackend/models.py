"""Keras models over kbackend's native model layer (kb_model_* in include/kbackend.h), with
Keras' names:

    from kbackend import models
    model = models.load_model("model.h5")      # a file Keras saved
    model.fit(x, y, batch_size=32, epochs=2)
    model.predict(x)
    model.save("again.h5")

Layers, optimizers, losses and metrics compute as Keras 2.2.4's do; no Keras or TensorFlow is
needed at run time. Failures raise ValueError (bad argument, shape, dtype or file),
NotImplementedError (a layer, loss or optimizer not supported), MemoryError or KBackendError,
with the library's message.
"""
import ctypes
import json

import numpy as np

from . import kbackend as _swig  # loaded first: ctypes below finds the same libkbackend
from . import _core, _native
from ._callback_base import Callback, NativeCallback
from ._signatures import OPTIONS
from ._kbackend import KBackendError

# Every C function with its signature from the header (_native.py, generated).
_lib = _native.bind(ctypes.CDLL("libkbackend.so.1"))
_p = ctypes.c_void_p
_CALLBACK = _native.kb_model_callback


# The JSON each option type of api/kbackend.toml takes, from a Python value.
_OPTION_VALUES = {
    "bool": bool,
    "int": int,
    "number": float,
    "object": dict,
    "numbers": lambda v: [float(x) for x in v],
    "class_weights": lambda v: {str(int(k)): float(w) for k, w in dict(v).items()},
    "callbacks": lambda v: [c.spec() for c in v],
}


# The results Model.__getattr__ hands back as Python values.
_SCALAR_RESULTS = (ctypes.c_int32, ctypes.c_int64, ctypes.c_uint64, ctypes.c_size_t,
                   ctypes.c_double, ctypes.c_char_p)


def _options_json(option_set, **values):
    """options_json of an option set (OPTIONS, from api/kbackend.toml) as bytes: the keys given,
    each as its type; None leaves a key out."""
    rows = OPTIONS[option_set]
    out = {}
    for key, value in values.items():
        kind, _default, argument = rows[key]
        assert not argument, f"{key} is a C argument of {option_set}, not an option"
        if value is not None:
            out[key] = _OPTION_VALUES[kind](value)
    return json.dumps(out).encode()




def _call(name, *args):
    status = getattr(_lib, "kb_" + name)(*args)
    if status != 0:
        message = (_lib.kb_last_error_message() or b"").decode("utf-8", "replace")
        error = _native.ERRORS.get(status, KBackendError)(message)
        error.status = status
        raise error


def _text(name, *args):
    out = ctypes.c_char_p()
    _call(name, *(args + (ctypes.byref(out),)))
    return out.value.decode("utf-8")


class _Arrays:
    """NumPy arrays as kb_tensor handles for one call (released after it); a kbackend Tensor
    (a .npy file mapped by tensor_from_npy, a DLPack producer's memory) is passed as it is,
    uncopied."""

    def __init__(self, arrays):
        if arrays is None:
            arrays = []
        elif not isinstance(arrays, (list, tuple)):
            arrays = [arrays]
        self.handles = (_p * max(len(arrays), 1))()
        self.count = len(arrays)
        self._made = []
        self._kept = []  # the Tensors passed as they are, alive for the call
        for i, a in enumerate(arrays):
            if isinstance(a, _core.Tensor):
                self.handles[i] = int(a.this)
                self._kept.append(a)
                continue
            a = np.ascontiguousarray(a)
            if a.dtype not in _CODES:
                a = a.astype(np.float32)
            shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            out = _p()
            _call("tensor_from_data", a.ctypes.data_as(_p), _CODES[a.dtype], shape, a.ndim,
                  ctypes.byref(out))
            self._made.append(out)
            self.handles[i] = out

    def __del__(self):
        for h in self._made:
            _lib.kb_tensor_release(h)


# The arrays given as inputs go in as they are where the library has their dtype (bfloat16 ones,
# ml_dtypes', as float32).
_CODES = {np.dtype(n): c for c, n in _core.DTYPE_NAMES.items() if n != "bfloat16"}


def _to_numpy(handle):
    code = ctypes.c_int32()
    _call("dtype", handle, ctypes.byref(code))
    dims = (ctypes.c_int64 * 32)()
    ndim = ctypes.c_int64()
    _call("int_shape", handle, dims, 32, ctypes.byref(ndim))
    out = np.empty(tuple(dims[:ndim.value]), dtype=_core.numpy_dtype(code.value))
    _call("tensor_copy_to", handle, out.ctypes.data_as(_p), out.nbytes)
    return out


def _list_to_numpy(lst):
    try:
        out = []
        for i in range(_lib.kb_tensor_list_size(lst)):
            t = _p()
            _call("tensor_list_get", lst, i, ctypes.byref(t))
            try:
                out.append(_to_numpy(t))
            finally:
                _lib.kb_tensor_release(t)
        return out
    finally:
        _lib.kb_tensor_list_release(lst)


def _values(name, *args):
    t = _p()
    _call(name, *(args + (ctypes.byref(t),)))
    try:
        return _to_numpy(t)
    finally:
        _lib.kb_tensor_release(t)


def _scalar_or_list(values):
    values = [float(v) for v in values]
    return values[0] if len(values) == 1 else values


def _strings(items):
    items = [items] if isinstance(items, str) else list(items or [])
    return (ctypes.c_char_p * max(len(items), 1))(*[s.encode() for s in items]), len(items)


class History:
    """What fit returns: .history maps each metric to its per-epoch values (Keras' History)."""

    def __init__(self, history, epochs):
        self.history = history
        self.epoch = list(epochs)


class _Optimizer:
    """A compiled model's optimizer (Model.optimizer): its learning rate."""

    def __init__(self, model):
        self._model = model

    @property
    def learning_rate(self):
        """The rate the next step takes (a schedule's at the iterations done)."""
        value = ctypes.c_double()
        _call("model_learning_rate", self._model._h, ctypes.byref(value))
        return value.value

    @learning_rate.setter
    def learning_rate(self, rate):
        _call("model_set_learning_rate", self._model._h, ctypes.c_double(float(rate)))


class Layer:
    """One layer of a model: its name, class, config and weights (Keras' Layer)."""
    def __init__(self, model, index):
        self._model, self._index = model, index

    @property
    def name(self):
        """The layer's name."""
        return _text("model_layer_name", self._model._h, self._index)

    @property
    def class_name(self):
        """The layer's Keras class name ("Dense")."""
        return _text("model_layer_class", self._model._h, self._index)

    def get_config(self):
        """Keras' layer.get_config(): the layer's config as a dict."""
        return json.loads(_text("model_layer_config", self._model._h, self._index))

    def get_weights(self):
        """Keras' layer.get_weights(): its weights' values as NumPy arrays."""
        out = _p()
        _call("model_layer_get_weights", self._model._h, self._index, ctypes.byref(out))
        return _list_to_numpy(out)

    def set_weights(self, weights):
        """Keras' layer.set_weights: one array per weight, in order."""
        arrays = _Arrays(list(weights))
        _call("model_layer_set_weights", self._model._h, self._index, arrays.handles, arrays.count)


def _graph_values(name, handle):
    """A model's graph values (a native list of new references) as kbackend Tensors."""
    out = _p()
    _call(name, handle, ctypes.byref(out))
    try:
        values = []
        for i in range(_lib.kb_tensor_list_size(out)):
            t = _p()
            _call("tensor_list_get", out, i, ctypes.byref(t))
            values.append(_core.Tensor(_swig.kbpy_adopt(t.value)))
        return values
    finally:
        _lib.kb_tensor_list_release(out)


class Model:
    """A Keras model (Sequential or functional) run by kbackend's native model layer."""

    def __init__(self, handle):
        self._h = handle

    def __del__(self):
        if getattr(self, "_h", None):
            _lib.kb_model_release(self._h)
            self._h = None

    def __getattr__(self, name):
        """A kb_model_NAME function the class writes no method for (one new in the C API, as
        kb_model_count_params): model.NAME() calls it, from _native's generated signatures, when
        it takes the model alone and gives one number or string."""
        sig = None if name.startswith("_") else _native.SIGNATURES.get("kb_model_" + name)
        out = sig[1][1]._type_ if sig and len(sig[1]) == 2 and hasattr(sig[1][1], "_type_") \
            else None
        if out not in _SCALAR_RESULTS:
            raise AttributeError(f"'Model' object has no attribute '{name}'")

        def method():
            value = out()
            _call("model_" + name, self._h, ctypes.byref(value))
            return value.value.decode() if out is ctypes.c_char_p else value.value
        method.__name__ = name
        method.__doc__ = f"kb_model_{name} (include/kbackend.h)."
        return method

    @property
    def optimizer(self):
        """The compiled model's optimizer, as far as callbacks use it: .learning_rate, read and
        set (Keras' model.optimizer.learning_rate)."""
        return _Optimizer(self)

    @property
    def layers(self):
        """The model's layers, in Keras' order."""
        n = ctypes.c_size_t()
        _call("model_layer_count", self._h, ctypes.byref(n))
        return [Layer(self, i) for i in range(n.value)]

    def get_layer(self, name):
        """The layer of that name (ValueError when there is none)."""
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError("No such layer: " + name)

    def get_weights(self):
        """Keras' model.get_weights(): every layer's weights, in order."""
        return [w for layer in self.layers for w in layer.get_weights()]

    def set_weights(self, weights):
        """Keras' model.set_weights: the arrays get_weights returns, in order."""
        weights = list(weights)
        for layer in self.layers:
            n = len(layer.get_weights())
            if n:
                layer.set_weights(weights[:n])
                weights = weights[n:]

    def compile(self, optimizer, loss, metrics=None, loss_weights=None):
        """Keras' compile: optimizer by name, dict or keras.optimizers object; loss by name (one,
        or one per output); metrics by name."""
        if hasattr(optimizer, "get_config"):  # a keras.optimizers object
            optimizer = {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}
        if isinstance(optimizer, dict):
            optimizer = json.dumps(optimizer)
        losses, n_losses = _strings(loss)
        names, n_metrics = _strings(metrics)
        _call("model_compile", self._h, optimizer.encode(), losses, n_losses, names, n_metrics,
              _options_json("compile", loss_weights=loss_weights or None))

    @property
    def metrics_names(self):
        """The names of evaluate's values (["loss", "acc"])."""
        return json.loads(_text("model_metrics_names", self._h))

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, seed=0, distributed=False):
        """Keras' fit. distributed: one model trained across the processes of the job
        kbackend.keras_dist.init() joined (each given every sample, batch_size rows of each
        step), rank 0 alone writing files and the progress bar. callbacks: Keras callbacks of kbackend.callbacks (EarlyStopping,
        ModelCheckpoint... run by the library, in order), kbackend.callbacks.Callback
        subclasses with Keras' hooks, and functions (epoch, batch, logs) -> True to stop,
        called after each batch and (batch -1) each epoch. validation_data: (x, y) or (x, y,
        sample_weight); sample_weight: an array (one output) or a list of one per output."""
        xs, ys = _Arrays(x), _Arrays(y)
        weighted = sample_weight is not None or validation_data is not None
        sw = _Arrays(sample_weight)
        vx, vy, vsw = (list(validation_data) + [None])[:3] if validation_data else (None,) * 3
        vx, vy, vsw = _Arrays(vx), _Arrays(vy), _Arrays(vsw)
        native = [c for c in callbacks or [] if isinstance(c, NativeCallback)]
        hooked = [c for c in callbacks or []
                  if isinstance(c, Callback) and not isinstance(c, NativeCallback)]
        functions = [c for c in callbacks or [] if not isinstance(c, Callback)]
        options = _options_json("fit", shuffle=shuffle, seed=seed,
                                validation_split=validation_split, initial_epoch=initial_epoch,
                                class_weight=class_weight or None, callbacks=native or None,
                                distributed=distributed)
        if batch_size is None:  # Keras' None: the described default
            batch_size = OPTIONS["fit"]["batch_size"][1]
        errors = []
        self.stop_training = False
        for c in hooked:
            c.set_model(self)
            c.set_params({"epochs": epochs, "verbose": verbose})
            c.on_train_begin()
        if hooked and initial_epoch < epochs:
            for c in hooked:
                c.on_epoch_begin(initial_epoch)

        added = {}  # what the program's callbacks add to the epochs' logs, for the history

        def relay(_user, epoch, batch, logs):
            try:
                logs = json.loads(logs.decode())
                given = set(logs)
                for c in hooked:
                    if batch >= 0:
                        c.on_train_batch_end(batch, logs)
                    else:
                        c.on_epoch_end(epoch, logs)
                if batch < 0:
                    for k in set(logs) - given:
                        added.setdefault(k, []).append(logs[k])
                stop = any([bool(f(epoch, batch, logs)) for f in functions])
                stop = stop or self.stop_training
                if batch < 0 and not stop and epoch + 1 < epochs:
                    for c in hooked:
                        c.on_epoch_begin(epoch + 1)
                return int(stop or self.stop_training)
            except BaseException as e:  # raised again after the C call returns
                errors.append(e)
                _lib.kb_set_error(1, f"{type(e).__name__}: {e}".encode("utf-8", "replace"))
                return 1

        callback = _CALLBACK(relay) if hooked or functions else _CALLBACK()
        history = ctypes.c_char_p()
        common = (batch_size, epochs, verbose, options, callback, None, ctypes.byref(history))
        try:
            if weighted:
                _call("model_fit_weighted", self._h, xs.handles, xs.count, ys.handles, ys.count,
                      sw.handles, sw.count, vx.handles, vx.count, vy.handles, vy.count,
                      vsw.handles, vsw.count, *common)
            else:
                _call("model_fit", self._h, xs.handles, xs.count, ys.handles, ys.count, *common)
        except Exception:
            if not errors:
                raise
        if errors:  # the callback's own exception, not the library's report of it
            raise errors[0]
        for c in hooked:
            c.on_train_end()
        h = json.loads(history.value.decode())
        for k, values in added.items():
            h.setdefault(k, values)
        done = len(h.get("loss", next(iter(h.values()), [])))
        return History(h, range(initial_epoch, initial_epoch + done))

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1):
        """Keras' evaluate: the loss and the metrics (a scalar when there is only the loss)."""
        xs, ys = _Arrays(x), _Arrays(y)
        return _scalar_or_list(_values("model_evaluate", self._h, xs.handles, xs.count, ys.handles,
                                       ys.count, batch_size or 32, verbose))

    def train_on_batch(self, x, y):
        """One gradient step on one batch; the loss and the metrics."""
        xs, ys = _Arrays(x), _Arrays(y)
        return _scalar_or_list(_values("model_train_on_batch", self._h, xs.handles, xs.count,
                                       ys.handles, ys.count))

    def test_on_batch(self, x, y):
        """The loss and the metrics of one batch, without training."""
        xs, ys = _Arrays(x), _Arrays(y)
        return _scalar_or_list(_values("model_test_on_batch", self._h, xs.handles, xs.count,
                                       ys.handles, ys.count))

    def predict(self, x, batch_size=None, verbose=0):
        """Keras' predict: an array (one output) or a list of arrays."""
        xs = _Arrays(x)
        out = _p()
        _call("model_predict", self._h, xs.handles, xs.count, batch_size or 32, verbose,
              ctypes.byref(out))
        arrays = _list_to_numpy(out)
        return arrays[0] if len(arrays) == 1 else arrays

    def predict_on_batch(self, x):
        """The outputs of one batch."""
        xs = _Arrays(x)
        out = _p()
        _call("model_predict_on_batch", self._h, xs.handles, xs.count, ctypes.byref(out))
        arrays = _list_to_numpy(out)
        return arrays[0] if len(arrays) == 1 else arrays

    def save(self, filepath, include_optimizer=True):
        """Keras' model.save: a file Keras loads (with the optimizer's state if asked), of the
        format its extension names: a `.keras` archive (Keras 3's) or HDF5."""
        _call("model_save", self._h, str(filepath).encode(), int(bool(include_optimizer)))

    def save_weights(self, filepath):
        """Keras' model.save_weights (HDF5)."""
        _call("model_save_weights", self._h, str(filepath).encode())

    def export_onnx(self, filepath, opset=17, batch_size=None):
        """The model's inference graph (what predict runs) as an ONNX file, checked by ONNX's
        checker: opset 17, the weights as initializers, the first dim of the inputs and outputs
        named 'batch' (any size) unless batch_size fixes it. An operation with no ONNX form
        raises NotImplementedError naming it."""
        _call("model_export_onnx", self._h, str(filepath).encode(),
              _options_json("export_onnx", opset=opset, batch_size=batch_size or None))

    def load_weights(self, filepath, by_name=False):
        """Keras' model.load_weights: by topology, or by layer name."""
        _call("model_load_weights", self._h, str(filepath).encode(), int(bool(by_name)))

    @property
    def inputs(self):
        """Keras' model.inputs: the input placeholders, to build on (extra losses, gradients,
        kbackend.function of one's own)."""
        return _graph_values("model_inputs", self._h)

    @property
    def outputs(self):
        """Keras' model.outputs: the outputs as graph values."""
        return _graph_values("model_outputs", self._h)

    @property
    def weights(self):
        """Keras' model.weights: the weight variables."""
        return _graph_values("model_weights", self._h)

    def add_loss(self, losses):
        """Keras' model.add_loss: a scalar tensor (or a list of them) over the model's tensors,
        in the loss from the next compile on."""
        for term in losses if isinstance(losses, (list, tuple)) else [losses]:
            _call("model_add_loss", self._h, int(term.this))

    @property
    def total_loss(self):
        """After compile: the total loss as a graph value."""
        out = _p()
        _call("model_total_loss", self._h, ctypes.byref(out))
        return _core.Tensor(_swig.kbpy_adopt(out.value))

    @property
    def targets(self):
        """After compile: the target placeholders, one per output."""
        return _graph_values("model_targets", self._h)

    @property
    def sample_weights(self):
        """After compile: the per-sample weight placeholders, one per output."""
        return _graph_values("model_sample_weights", self._h)

    @property
    def updates(self):
        """After compile: the updates of one training step."""
        return _graph_values("model_updates", self._h)

    def reset_states(self):
        """Keras' model.reset_states(): stateful recurrent layers' states back to zeros."""
        _call("model_reset_states", self._h)

    def to_json(self):
        """Keras' model.to_json()."""
        return _text("model_to_json", self._h)

    def with_dtype_policy(self, policy):
        """A copy (uncompiled, the same weights' values) whose float32 layers take the dtype
        policy `policy` ("mixed_bfloat16": bfloat16 computation over float32 variables), as
        keras.models.clone_model with each layer's dtype set."""
        h = _p()
        _call("model_with_dtype_policy", self._h, str(policy).encode(), ctypes.byref(h))
        return Model(h)

    def summary(self, print_fn=None):
        """Keras' model.summary(): printed, or given line by line to print_fn."""
        for line in _text("model_summary", self._h).rstrip("\n").split("\n"):
            (print_fn or print)(line)  # a line at a time, as Keras calls print_fn


class LayerContext:
    """A custom layer while its function runs (register_layer): where it asks for weights."""

    def __init__(self, handle):
        self._h = handle

    def add_weight(self, name, shape, initializer="zeros", trainable=True):
        """The layer's weight `name` (a variable, kbackend.Tensor): made with Keras' initializer
        (a name such as "zeros", or {"class_name": ..., "config": {...}}) the first time, the
        same variable after; saved and loaded in the order first asked for."""
        if self._h is None:
            raise ValueError("add_weight: the layer's function has returned")
        return _core.Tensor(_swig.kb_model_layer_weight(self._h, name, list(shape),
                                                        json.dumps(initializer), trainable))


def register_layer(class_name, call):
    """Lets models name a layer class of one's own (a Lambda, a custom layer): when a model file
    or JSON has class_name, call(layer, config, inputs) builds it, with layer a LayerContext for
    its weights, config the layer's config (a dict) and inputs kbackend Tensors; it returns a
    Tensor or a list of them, built with kbackend's functions. A class registered again is
    replaced; an exception it raises fails the load, naming the layer."""
    if not callable(call):
        raise TypeError("register_layer: call must be callable")

    def build(handle, config_json, inputs):
        layer = LayerContext(handle)
        try:
            out = call(layer, json.loads(config_json), [_core.Tensor(t) for t in inputs])
        finally:
            layer._h = None  # the handle is valid only while the function runs
        return list(out) if isinstance(out, (list, tuple)) else out

    _swig.kb_model_register_layer(class_name, build)


def load_model(filepath, compile=True):  # noqa: A002 - Keras' name
    """Keras' load_model: a model from a Keras 3 `.keras` archive or an HDF5 file (by its
    content), compiled from it when it says how."""
    h = _p()
    _call("model_load", str(filepath).encode(), int(bool(compile)), ctypes.byref(h))
    return Model(h)


def model_from_json(json_string):
    """Keras' model_from_json: a model from Keras' JSON, its weights initialized."""
    h = _p()
    _call("model_from_json", json_string.encode(), ctypes.byref(h))
    return Model(h)


