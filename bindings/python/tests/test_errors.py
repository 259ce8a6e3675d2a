"""Failures become the right Python exception, with the library's message and .status."""
import numpy as np
import pytest

import kbackend as K
from kbackend import kbackend as raw


def test_invalid_argument_is_value_error_with_the_c_message():
    with pytest.raises(ValueError) as e:
        K.reshape(K.constant(np.ones((3, 4))), (5, 5))
    assert str(e.value).startswith("reshape: cannot reshape (3, 4)")
    assert e.value.status == raw.KB_ERROR_SHAPE


def test_dtype_error():
    with pytest.raises(ValueError, match="softmax: expected a floating dtype") as e:
        K.softmax(K.constant([1, 2], dtype="int32"))
    assert e.value.status == raw.KB_ERROR_DTYPE


def test_bad_option_strings():
    x = K.placeholder(shape=(1, 4, 4, 1))
    with pytest.raises(ValueError, match="padding") as e:
        K.pool2d(x, (2, 2), padding="bogus")
    assert e.value.status == raw.KB_ERROR_INVALID_ARGUMENT
    with pytest.raises(ValueError, match="dtype"):
        K.zeros((2,), dtype="complex")
    with pytest.raises(ValueError, match="data_format"):
        K.set_image_data_format("channels_middle")
    with pytest.raises(ValueError, match="'tf' or 'th'"):
        K.set_image_dim_ordering("xy")


def test_not_implemented():
    with pytest.raises(NotImplementedError, match="placeholder: a sparse placeholder") as e:
        K.placeholder(sparse=True)  # a sparse placeholder needs a rank
    assert e.value.status == raw.KB_ERROR_NOT_IMPLEMENTED


def test_kbackend_error_for_other_statuses():
    assert issubclass(K.KBackendError, RuntimeError)
    f = K.function([K.placeholder(shape=(2,))], [K.constant(1.0)])
    if K.devices()["cuda"] == 0:
        with pytest.raises(K.KBackendError, match="function_set_device_name") as e:
            f.device = "cuda"
        assert e.value.status == raw.KB_ERROR_DEVICE
    else:
        f.device = "cuda"
        assert f.device.startswith("cuda:")
    with pytest.raises(ValueError, match="is not cpu, cuda or cuda:N"):
        f.device = "tpu"
    with pytest.raises(ValueError, match="must be a number"):
        f.device = "cuda:x"
    with pytest.raises(K.KBackendError) as e:
        f.device = "cuda:4096"  # never this process' GPU
    assert e.value.status == raw.KB_ERROR_DEVICE
    f.device = "cpu"
    assert f.device == "cpu"


def test_the_error_does_not_leak_into_the_next_call():
    with pytest.raises(ValueError):
        K.reshape(K.constant([1.0, 2.0]), (3,))
    assert K.reshape(K.constant([1.0, 2.0]), (2, 1)).shape == (2, 1)
    assert raw.kb_last_error_code() == raw.KB_OK


def test_wrong_python_types():
    with pytest.raises(TypeError):
        K.exp("x")
    with pytest.raises(TypeError):
        K.reshape(K.constant([1.0]), "ab")
    with pytest.raises(TypeError):
        K.concatenate([K.constant([1.0]), object()])
    with pytest.raises(TypeError, match="no dtype"):
        K.constant(np.array([1 + 2j]))
    with pytest.raises(TypeError):
        K.mean(K.constant([1.0]), axis=1, bogus=2)


def test_function_call_errors():
    x = K.placeholder(shape=(None, 2))
    f = K.function([x], [x * 2])
    with pytest.raises(ValueError, match="takes 1 inputs"):
        f([])
    with pytest.raises(TypeError):
        f(np.ones((1, 2)))
    with pytest.raises(ValueError) as e:
        f([np.ones((1, 3), np.float32)])
    assert "function" in str(e.value)


def test_callback_exception_comes_back_unchanged():
    class Boom(Exception):
        pass

    def fn(x):
        raise Boom("inside map_fn")

    with pytest.raises(Boom, match="inside map_fn"):
        K.map_fn(fn, K.constant(np.ones((2, 2))))
    with pytest.raises(TypeError, match="must return a tensor"):
        K.map_fn(lambda x: 3, K.constant(np.ones((2, 2))))
    # the library got a message of its own
    assert "map_fn" in raw.kb_last_error_message()
