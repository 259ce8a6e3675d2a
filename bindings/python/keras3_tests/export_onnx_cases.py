"""The layer cases Keras 3 made (make_layer_cases.py) exported to ONNX (run in the Keras 3 venv,
which has onnx and onnxruntime): kbackend loads each archive, exports it, PyPI's onnx checker
passes on the file, and ONNX Runtime's outputs on the case's inputs are kbackend's predictions
within 1e-4 relative and 1e-5 absolute. A case refused (an operation with no ONNX form) must
be in REFUSED with the operation its message names, and a case in REFUSED must still be
refused, so the list only shrinks. Prints one line per case.
Usage: python export_onnx_cases.py OUT [NAME...] (NAME: a file name without .keras)"""
import glob
import os
import re
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

from kbackend import models
from expected_arrays import arrays

TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int32)": np.int32,
         "tensor(int64)": np.int64, "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_}
# Cases whose layers compute with an operation the export has no ONNX form for yet: the
# operation the refusal names.
REFUSED = {}


def export(name, path, expected, folder):
    native = models.load_model(path)
    out = os.path.join(folder, name + ".onnx")
    try:
        native.export_onnx(out)
    except NotImplementedError as e:
        m = re.search(r"the operation (\w+)", str(e))
        op = m.group(1) if m else str(e)
        if REFUSED.get(name) != op:
            raise AssertionError("%s: refused (%s), not as REFUSED says (%s)"
                                 % (name, e, REFUSED.get(name)))
        return "refused: %s" % op
    if name in REFUSED:
        raise AssertionError("%s: exports now; take it out of REFUSED" % name)
    onnx.checker.check_model(onnx.load(out), full_check=True)
    session = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
    xs = arrays(expected, name, "x")
    # The inputs in the graph's types (a case's token ids are stored as floats).
    feed = {i.name: x.astype(TYPES[i.type]) for i, x in zip(session.get_inputs(), xs)}
    got = session.run(None, feed)
    want = native.predict(xs if len(xs) > 1 else xs[0])
    want = want if isinstance(want, list) else [want]
    worst = 0.0
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name)
        worst = max(worst, float(np.max(np.abs(g - w))) if g.size else 0.0)
    return "exported (max error %.1e)" % worst


def main(out, names):
    expected = np.load(os.path.join(out, "expected.npz"))
    files = sorted(glob.glob(os.path.join(out, "*.keras")))
    failures, counts = [], {"exported": 0, "refused": 0}
    with tempfile.TemporaryDirectory() as folder:
        for path in files:
            name = os.path.basename(path)[:-len(".keras")]
            if names and name not in names:
                continue
            try:
                result = export(name, path, expected, folder)
                counts[result.split(" ")[0].rstrip(":")] += 1
            except Exception as e:  # every case is reported, then the run fails
                result = "FAILED: %s" % e
                failures.append(name)
            print("%-44s %s" % (name, result))
    print("ONNX export: %d layer cases exported, %d refused" % (counts["exported"],
                                                               counts["refused"]))
    if failures:
        sys.exit("ONNX export failed for %d cases: %s" % (len(failures), ", ".join(failures)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
