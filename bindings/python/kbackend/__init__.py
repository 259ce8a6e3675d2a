"""kbackend for Python: the Keras 2.2 backend API over the native kbackend library.

    import numpy as np
    import kbackend as K

    x = K.placeholder(shape=(None, 3))
    y = K.sum(K.square(x) * 2 + 1, axis=1)
    f = K.function([x], [y])
    f([np.ones((2, 3), np.float32)])  # [array([9., 9.], dtype=float32)]

Every function of include/kbackend.h is here under its Keras name (kb_mean -> kbackend.mean) with
Keras' keyword defaults; failures raise ValueError (invalid argument, shape, dtype),
NotImplementedError, MemoryError or kbackend.KBackendError, each with the library's message and
a .status attribute. kbackend.kbackend is the raw SWIG layer.
"""
from . import kbackend as _c
from ._kbackend import KBackendError

ABI_VERSION = 1
if _c.kb_abi_version() != ABI_VERSION:
    raise ImportError("kbackend: this binding needs ABI %d of libkbackend, the loaded library "
                      "has %d" % (ABI_VERSION, _c.kb_abi_version()))

from ._core import DTYPE_NAMES, Function, Tensor, live_tensors  # noqa: E402
from ._api import API as _API  # noqa: E402

globals().update(_API)
__version__ = _c.kb_version()
__all__ = sorted(_API) + ["Tensor", "Function", "KBackendError", "live_tensors", "DTYPE_NAMES"]
del _API
