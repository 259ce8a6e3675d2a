"""Every public function, class and method of the package has a docstring (the reference that
scripts/docs.sh builds with pdoc shows them), and the generated ones start with the line of
api/kbackend.toml."""
import inspect

import kbackend
import kbackend.keras_backend
import kbackend.keras_dist
import kbackend.models
from kbackend import _signatures

MODULES = (kbackend, kbackend.models, kbackend.keras_backend, kbackend.keras_dist)


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if inspect.ismodule(obj) or not callable(obj):
            continue
        if getattr(obj, "__module__", "").split(".")[0] != "kbackend":
            continue  # re-exported from elsewhere (NumPy ...)
        yield f"{module.__name__}.{name}", obj
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                target = value.fget if isinstance(value, property) else value
                if callable(target) or isinstance(value, property):
                    yield f"{module.__name__}.{name}.{attr}", target


def test_every_public_name_has_a_docstring():
    missing = sorted({name for module in MODULES for name, obj in _public(module)
                      if not (inspect.getdoc(obj) or "").strip()})
    assert not missing, f"no docstring: {missing}"


def test_generated_functions_start_with_the_description():
    checked = 0
    for name, line in _signatures.DOCS.items():
        fn = getattr(kbackend, name, None)
        if fn is None:
            continue
        doc = inspect.getdoc(fn) or ""
        if doc.startswith(line):
            checked += 1
    assert checked > 150, checked
