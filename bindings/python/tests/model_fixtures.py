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
