"""The committed model files of a folder of tests/model_files (made by its make_fixtures.py) and
what the Keras that wrote them computed (its expected.npz: NAME/x0, NAME/y0, NAME/pred0, ...)."""
import os

import numpy as np

_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests",
                      "model_files")


class ModelFixtures:
    def __init__(self, folder):
        self.folder = os.path.join(_FILES, folder)
        self.expected = np.load(os.path.join(self.folder, "expected.npz"))

    def path(self, file_name):
        return os.path.join(self.folder, file_name)

    def arrays(self, name, kind):
        """NAME/KIND0, NAME/KIND1, ... while they exist."""
        out, i = [], 0
        while "%s/%s%d" % (name, kind, i) in self.expected:
            out.append(self.expected["%s/%s%d" % (name, kind, i)])
            i += 1
        return out


# A model of Keras 2.2.4's JSON (its first layer's batch_input_shape) and a compile of Keras
# 2.2.4's Adam with decay: what an archive of a model from elsewhere carries to Keras 3.
KERAS2_DENSE = {"class_name": "Sequential", "config": {"name": "s", "layers": [
    {"class_name": "Dense", "config": {"name": "d1", "units": 8, "activation": "tanh",
                                       "batch_input_shape": [None, 6]}},
    {"class_name": "Dense", "config": {"name": "d2", "units": 2}}]}}
KERAS2_DECAYED_ADAM = {"class_name": "Adam", "config": {"lr": 0.05, "decay": 0.5}}
