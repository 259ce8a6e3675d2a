"""One process of the data-parallel native fit check (test_fit_distributed.py runs it under
mpirun): a Keras MLP fitted with distributed=True on n processes, batch b each, must end with the
weights and history of the same MLP fitted in this process alone with batch n*b, and with rank
0's weights bit for bit. The processes start from different weights (fit takes rank 0's).
Prints "rank R of N: ok" when both hold; a ModelCheckpoint writes on rank 0 alone."""
import json
import os
import sys

import numpy as np

import kbackend
import kbackend.keras_dist as kd
from kbackend import models
from kbackend.callbacks import ModelCheckpoint

MLP = {"class_name": "Sequential", "config": {"name": "mlp", "layers": [
    {"class_name": "Dense", "config": {"name": "hidden", "units": 8, "activation": "relu",
                                       "batch_input_shape": [None, 4]}},
    {"class_name": "Dense", "config": {"name": "out", "units": 3, "activation": "softmax"}}]}}
BATCH = 5


def model(seed):
    kbackend.set_random_seed(seed)
    m = models.model_from_json(json.dumps(MLP))
    m.compile("rmsprop", "categorical_crossentropy", metrics=["accuracy"])
    return m


def main():
    kd.init(required=len(sys.argv) < 2 or sys.argv[1] != "optional")
    folder = sys.argv[2] if len(sys.argv) > 2 else None
    rank, size = kd.rank(), kd.size()
    gen = np.random.default_rng(9)
    x = gen.standard_normal((53, 4)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[gen.integers(0, 3, 53)]
    callbacks = []
    if folder:
        callbacks = [ModelCheckpoint(os.path.join(folder, "rank%d-{epoch}.weights.h5" % rank),
                                     save_weights_only=True)]
    shared, alone = model(20 + rank), model(20)
    h_shared = shared.fit(x, y, batch_size=BATCH, epochs=3, verbose=0, validation_split=0.25,
                          seed=4, distributed=True, callbacks=callbacks).history
    h_alone = alone.fit(x, y, batch_size=BATCH * size, epochs=3, verbose=0,
                        validation_split=0.25, seed=4).history
    for key in h_alone:
        np.testing.assert_allclose(h_shared[key], h_alone[key], rtol=1e-5, atol=1e-6,
                                   err_msg=key)
    for got, want in zip(shared.get_weights(), alone.get_weights()):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
        np.testing.assert_array_equal(kd.allreduce(got, average=True), got)
    print("rank %d of %d: ok" % (rank, size), flush=True)


if __name__ == "__main__":
    main()
