"""Trains a Keras 2.2 convolutional network on the bundled 8x8 digits data-parallel: unmodified
Keras on kbackend, with kbackend.keras_dist as Horovod's Keras module. Each process trains on its
share of the digits; the gradients are averaged inside the training function, so the processes
keep equal weights. Each rank prints its loss per epoch; rank 0 the test accuracy.

    KERAS_BACKEND=kbackend.keras_backend mpirun -np 2 python3 train_keras_dist.py
    KERAS_BACKEND=kbackend.keras_backend python3 train_keras_dist.py   # one process

Usage: train_keras_dist.py [examples/data/digits.csv]   (exit status 0 when accuracy > 90%)
"""
import os
import sys

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "kbackend.keras_backend")
import keras  # noqa: E402
import kbackend.keras_dist as kd  # noqa: E402
from keras.layers import Conv2D, Dense, Flatten, MaxPooling2D  # noqa: E402
from keras.models import Sequential  # noqa: E402
from keras.optimizers import SGD  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "..", "examples", "data", "digits.csv")


class PrintLoss(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        print("rank %d epoch %2d  loss %.4f" % (kd.rank(), epoch + 1, logs["loss"]), flush=True)


def main(path=DEFAULT_DATA, epochs=8, batch=32):
    kd.init(required=False)  # alone without a launcher or without MPI
    data = np.loadtxt(path, delimiter=",", comments="#", dtype=np.float32)
    x_all = data[:, 1:].reshape(-1, 8, 8, 1) / 16.0
    y_all = keras.utils.to_categorical(data[:, 0], 10)
    order = np.random.RandomState(42).permutation(len(x_all))
    n_test = len(x_all) // 5
    test, train = order[:n_test], order[n_test:]
    x_train, y_train = kd.shard(x_all[train], y_all[train])
    if kd.rank() == 0:
        print("%d processes, %d training digits each" % (kd.size(), len(x_train)), flush=True)

    model = Sequential([Conv2D(16, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
                        MaxPooling2D(), Flatten(), Dense(10, activation="softmax")])
    # The usual scaling: n processes take n times the samples per step.
    model.compile(kd.DistributedOptimizer(SGD(lr=0.05 * kd.size(), momentum=0.9)),
                  "categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=batch, epochs=epochs, verbose=0,
              callbacks=[kd.BroadcastGlobalVariablesCallback(0), kd.MetricAverageCallback(),
                         PrintLoss()])
    accuracy = model.evaluate(x_all[test], y_all[test], verbose=0)[1]
    if kd.rank() == 0:
        print("test accuracy %.2f%%" % (100 * accuracy), flush=True)
    return 0 if accuracy > 0.9 else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
