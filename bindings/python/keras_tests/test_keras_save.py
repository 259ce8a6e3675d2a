"""model.save with every optimizer of Keras 2.2.4: each weight (the layers' and the optimizer's)
lies under a name of its own in the file, and load_weights restores the layers' weights. Keras'
own load_model needs h5py < 3, which Debian 12's Python does not have, so the file is read here
through h5py directly."""
import numpy as np
import pytest

keras = pytest.importorskip("keras")
h5py = pytest.importorskip("h5py")
from keras import backend as K  # noqa: E402
from keras import layers, models, optimizers  # noqa: E402

OPTIMIZERS = {
    "SGD": lambda: optimizers.SGD(),
    "SGD momentum nesterov decay": lambda: optimizers.SGD(momentum=0.9, nesterov=True, decay=0.01),
    "RMSprop": lambda: optimizers.RMSprop(),
    "Adagrad": lambda: optimizers.Adagrad(),
    "Adadelta": lambda: optimizers.Adadelta(),
    "Adam": lambda: optimizers.Adam(),
    "Adam amsgrad": lambda: optimizers.Adam(amsgrad=True),
    "Adamax": lambda: optimizers.Adamax(),
    "Nadam": lambda: optimizers.Nadam(),
}


def _datasets(group):
    names = []
    group.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return names


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_save_with_every_optimizer(name, tmp_path):
    rng = np.random.RandomState(0)
    model = models.Sequential([layers.Dense(4, input_shape=(3,), activation="tanh"),
                               layers.Dense(2)])
    model.compile(OPTIMIZERS[name](), "mse")
    model.fit(rng.rand(8, 3), rng.rand(8, 2), epochs=2, verbose=0)
    path = str(tmp_path / "model.h5")
    model.save(path)
    weights = model.optimizer.weights
    assert len({w.name for w in weights}) == len(weights)
    with h5py.File(path, "r") as f:
        saved = _datasets(f["optimizer_weights"])
        assert len(saved) == len(weights)
        for w, stored in zip(weights, f["optimizer_weights"].attrs["weight_names"]):
            np.testing.assert_array_equal(f["optimizer_weights"][stored], K.get_value(w))
        assert len(_datasets(f["model_weights"])) == 4  # two kernels, two biases
    again = models.Sequential([layers.Dense(4, input_shape=(3,), activation="tanh"),
                               layers.Dense(2)])
    again.load_weights(path)
    x = rng.rand(5, 3)
    np.testing.assert_array_equal(again.predict(x), model.predict(x))


def test_names_are_unique_and_scoped():
    a, b = K.variable(1.0, name="w"), K.variable(2.0, name="w")
    assert a.name != b.name and b.name.startswith(a.name + "_")
    with K.name_scope("outer"):
        with K.name_scope("inner"):
            c, d = K.zeros((2,)), K.zeros((2,))
    assert c.name.startswith("outer/inner/") and d.name.startswith("outer/inner/")
    assert c.name != d.name
