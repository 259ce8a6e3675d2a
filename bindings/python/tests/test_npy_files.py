"""NumPy's .npy files (kb_tensor_from_npy, kb_tensor_save_npy) against NumPy itself: every dtype,
shape, format version, byte order and memory order numpy.save and numpy.lib.format write, read
whole and mapped; files written here load in NumPy; fit, evaluate and predict over mapped files
equal them over the arrays; damaged and hostile files fail with their name and the problem."""
import json
import os

import numpy as np
import pytest

import kbackend
from kbackend import models

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 5), (1, 0, 2)]


def _values(dtype, shape, seed=0):
    gen = np.random.default_rng(seed)
    if dtype == "bool":
        return gen.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        return gen.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return gen.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("mapped", [False, True], ids=["read", "mapped"])
def test_numpy_save_files_load_as_numpy_has_them(tmp_path, dtype, shape, mapped):
    want = _values(dtype, shape)
    path = str(tmp_path / "a.npy")
    np.save(path, want)
    got = kbackend.tensor_from_npy(path, mapped).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_every_format_version(tmp_path, version):
    want = _values("float32", (4, 3))
    path = str(tmp_path / "v.npy")
    with open(path, "wb") as f:
        np.lib.format.write_array(f, want, version=version)
    for mapped in (False, True):
        np.testing.assert_array_equal(kbackend.tensor_from_npy(path, mapped).numpy(), want)


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i2", ">i4", ">i8", ">f2"])
def test_big_endian_files_are_swapped(tmp_path, dtype):
    want = _values(np.dtype(dtype).newbyteorder("=").name, (5, 2)).astype(dtype)
    path = str(tmp_path / "be.npy")
    np.save(path, want)
    got = kbackend.tensor_from_npy(path).numpy()
    np.testing.assert_array_equal(got, want.astype(want.dtype.newbyteorder("=")))
    with pytest.raises(ValueError, match="be.npy: big-endian data cannot be mapped"):
        kbackend.tensor_from_npy(path, True)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (2, 1, 3, 2)], ids=str)
def test_fortran_order_is_transposed_to_c_order(tmp_path, shape):
    want = np.asfortranarray(_values("float64", shape))
    path = str(tmp_path / "f.npy")
    np.save(path, want)
    with open(path, "rb") as f:
        assert "'fortran_order': True" in f.read(128).decode("latin1")
    np.testing.assert_array_equal(kbackend.tensor_from_npy(path).numpy(), want)
    with pytest.raises(ValueError, match="Fortran-ordered data cannot be mapped"):
        kbackend.tensor_from_npy(path, True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_files_written_here_are_numpy_save_files(tmp_path, dtype, shape):
    want = _values(dtype, shape, seed=1)
    ours, theirs = str(tmp_path / "ours.npy"), str(tmp_path / "theirs.npy")
    kbackend.tensor_save_npy(kbackend.constant(want, dtype=dtype), ours)
    np.save(theirs, want)
    got = np.load(ours)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        assert a.read() == b.read()  # byte for byte, header included


def test_bfloat16_has_no_npy_type(tmp_path):
    x = kbackend.constant(np.ones((2, 2), np.float32), dtype="bfloat16")
    with pytest.raises(ValueError, match="NumPy has no type for bfloat16"):
        kbackend.tensor_save_npy(x, str(tmp_path / "b.npy"))


MLP = {"class_name": "Sequential", "config": {"name": "m", "layers": [
    {"class_name": "Dense", "config": {"name": "h", "units": 6, "activation": "tanh",
                                       "batch_input_shape": [None, 4]}},
    {"class_name": "Dense", "config": {"name": "o", "units": 2, "activation": "softmax"}}]}}


def _model():
    kbackend.set_random_seed(3)
    m = models.model_from_json(json.dumps(MLP))
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def test_fit_evaluate_and_predict_over_mapped_files_equal_them_over_arrays(tmp_path):
    gen = np.random.default_rng(5)
    x = gen.standard_normal((300, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    np.save(str(tmp_path / "x.npy"), x)
    np.save(str(tmp_path / "y.npy"), y)
    xm = kbackend.tensor_from_npy(str(tmp_path / "x.npy"), True)
    ym = kbackend.tensor_from_npy(str(tmp_path / "y.npy"), True)
    a, b = _model(), _model()
    ha = a.fit(x, y, batch_size=16, epochs=2, verbose=0, validation_split=0.2, seed=1).history
    hb = b.fit(xm, ym, batch_size=16, epochs=2, verbose=0, validation_split=0.2, seed=1).history
    assert ha == hb
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)
    assert a.evaluate(x, y, verbose=0) == b.evaluate(xm, ym, verbose=0)
    np.testing.assert_array_equal(a.predict(x), b.predict(xm))
    # The file itself is never written.
    np.testing.assert_array_equal(np.load(str(tmp_path / "x.npy")), x)


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def _header(text, version=1):
    body = text.encode("latin1")
    pad = (64 - (10 + len(body) + 1) % 64) % 64
    body += b" " * pad + b"\n"
    return b"\x93NUMPY" + bytes([version, 0]) + len(body).to_bytes(2, "little") + body


@pytest.mark.parametrize("data, message", [
    (b"", "not a .npy file"),
    (b"PK\x03\x04" + b"\0" * 60, r"not a .npy file \(no \\x93NUMPY magic\)"),
    (b"\x93NUMPY\x09\x00" + b"\0" * 60, "format version 9.0"),
    (b"\x93NUMPY\x01\x00\xff\x00{", "truncated in its header"),
    (b"\x93NUMPY\x02\x00\xff\xff\xff\x7f" + b"\0" * 64, "a header of 2147483647 bytes"),
    (_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }") + b"\0" * 12,
     r"truncated \(shape \(4, 4\) of <f4 needs 64 bytes of data, the file holds 12\)"),
    (_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }"),
     "a shape too large"),
    (_header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }") + b"\0" * 8,
     "dtype '<c8' is not one kbackend has"),
    (_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"),
     "a string expected"),
    (_header("{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,), }"),
     "fortran_order is neither True nor False"),
    (_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
     "a dim of its shape is not a number"),
    (_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
     "an unknown key 'x'"),
    (_header("{'descr': '<f4', 'shape': (1,), }"), "lacks descr, fortran_order or shape"),
    (_header("{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 65 + "), }"),
     "more than 64 dims"),
], ids=range(14))
def test_damaged_and_hostile_files_fail_naming_the_file(tmp_path, data, message):
    path = _write(str(tmp_path / "bad.npy"), data)
    for mapped in (False, True):
        with pytest.raises(ValueError, match=message) as e:
            kbackend.tensor_from_npy(path, mapped)
        assert "bad.npy" in str(e.value)


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.npy: no such file"):
        kbackend.tensor_from_npy(str(tmp_path / "nope.npy"))
    with pytest.raises(OSError, match="not a regular file"):
        kbackend.tensor_from_npy(str(tmp_path))
    with pytest.raises(OSError, match="cannot be created"):
        kbackend.tensor_save_npy(kbackend.constant(np.ones(2, np.float32)),
                                 str(tmp_path / "no" / "such" / "dir.npy"))
    assert not os.path.exists(str(tmp_path / "no"))
