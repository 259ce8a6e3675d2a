"""Restores the aliases Python 3.11 / NumPy 1.24 / SciPy 1.10 removed and Keras 2.2.4 still uses,
so that unmodified Keras 2.2.4 imports. Loaded by Python at start-up when this folder is on
PYTHONPATH (bindings/python/keras_tests/run.sh puts it there); for the Keras tests only."""
import collections
import collections.abc
import inspect

for _name in ("Iterable", "Mapping", "MutableMapping", "Sequence", "MutableSequence", "Set",
              "MutableSet", "Callable", "Hashable", "Sized", "Container", "OrderedDict"):
    if not hasattr(collections, _name) and hasattr(collections.abc, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

if not hasattr(inspect, "getargspec"):
    _ArgSpec = collections.namedtuple("ArgSpec", "args varargs keywords defaults")

    def getargspec(func):
        spec = inspect.getfullargspec(func)
        return _ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)

    inspect.getargspec = getargspec

try:
    import yaml

    _yaml_load = yaml.load

    def _load(stream, Loader=None, **kwargs):  # noqa: N803 - yaml's name
        return _yaml_load(stream, Loader=Loader or yaml.FullLoader, **kwargs)

    yaml.load = _load
except ImportError:
    pass

try:
    import numpy as np

    for _name, _alias in (("bool", bool), ("int", int), ("float", float), ("complex", complex),
                          ("object", object), ("str", str), ("long", int), ("unicode", str)):
        if _name not in np.__dict__:
            setattr(np, _name, _alias)
except ImportError:
    pass

try:
    import scipy.misc
    import scipy.special

    if not hasattr(scipy.misc, "logsumexp"):
        scipy.misc.logsumexp = scipy.special.logsumexp
except ImportError:
    pass

try:  # h5py >= 3 reads string attributes as str; Keras 2.2.4 calls .decode('utf8') on them
    import h5py
    import numpy as np

    class _DecodableStr(str):
        def decode(self, *args, **kwargs):
            return str(self)

    _attrs_getitem = h5py.AttributeManager.__getitem__
    if not getattr(_attrs_getitem, "_kbackend_patched", False):
        def _getitem(self, name):
            value = _attrs_getitem(self, name)
            if isinstance(value, str):
                return _DecodableStr(value)
            if getattr(value, "dtype", None) is not None and value.dtype.kind in "OU":
                out = np.empty(value.shape, dtype=object)
                out.ravel()[:] = [_DecodableStr(v) if isinstance(v, str) else v
                                  for v in value.ravel()]
                return out
            return value

        _getitem._kbackend_patched = True
        h5py.AttributeManager.__getitem__ = _getitem
except ImportError:
    pass
