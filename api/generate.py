#!/usr/bin/env python3
"""Writes every generated binding file from include/kbackend.h and api/kbackend.toml.

  python3 api/generate.py           write the files
  python3 api/generate.py --check   fail (exit 1) if any committed file differs from its output
  python3 api/generate.py --doxygen FILE   write the C reference's Doxygen pages
  python3 api/generate.py --swig DIR       write SWIG's generated interface files (Java, C#)
(the last two are build outputs, not committed)

Generated files are committed (a Go module and a crate must build without this script) and never
edited by hand; CI runs --check.
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from apigen import (core, cpp, cpp_options, doxygen, errors, go, go_options,  # noqa: E402
                    jvm_options, model, python, python_ctypes, rust, rust_options, swig)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


GO_PACKAGE = "bindings/go/kbackend"
GO_GENERATED = f"{GO_PACKAGE}/backend.go"


def _go_handwritten():
    sources = []
    for path in sorted(glob.glob(os.path.join(ROOT, GO_PACKAGE, "*.go"))):
        if not path.endswith(("_test.go", "/backend.go", "/options.go", "/errors.go")):
            with open(path, encoding="utf-8") as f:
                sources.append(f.read())
    return go.handwritten_names(sources)


def _rust_handwritten():
    """(Tensor methods, Model methods) the crate writes by hand."""
    def methods(rel):
        with open(os.path.join(ROOT, "bindings/rust/kbackend/src", rel), encoding="utf-8") as f:
            return rust.handwritten_methods(f.read())
    return methods("lib.rs"), methods("models.rs")


def _cpp_handwritten():
    texts = []
    for rel in cpp.HANDWRITTEN:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            texts.append(f.read())
    return cpp.handwritten(texts)


def outputs(api):
    return {
        **jvm_options.java_files(api),
        jvm_options.CSHARP_GENERATED: jvm_options.csharp_file(api),
        errors.JAVA_GENERATED: errors.java_file(api),
        errors.CSHARP_GENERATED: errors.csharp_file(api),
        errors.GO_GENERATED: errors.go_file(api),
        errors.RUST_GENERATED: errors.rust_module(api),
        core.GENERATED: core.option_sets_header(api),
        cpp.GENERATED: cpp.functions_header(api, *_cpp_handwritten()),
        cpp.MODEL_GENERATED: cpp.model_functions_header(api, *_cpp_handwritten()),
        GO_GENERATED: go.backend_file(api, _go_handwritten()),
        go_options.GENERATED: go_options.options_file(api),
        "bindings/rust/kbackend-sys/src/raw.rs": rust.sys_declarations(api),
        "bindings/rust/kbackend/src/backend.rs": rust.backend_module(api, *_rust_handwritten()),
        rust_options.GENERATED: rust_options.options_module(api),
        "bindings/python/kbackend/_signatures.py": python.signatures_module(api),
        python.CALLBACKS_GENERATED: python.callbacks_module(api),
        python_ctypes.GENERATED: python_ctypes.module(api),
    }


def _write_if_changed(path, text):
    """Build outputs are rewritten only on change, so that what depends on them is not rebuilt
    for nothing."""
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def main(argv):
    check = "--check" in argv
    api = model.load_repository(ROOT)
    if "--doxygen" in argv:
        _write_if_changed(argv[argv.index("--doxygen") + 1], doxygen.pages(api))
        return 0
    if "--swig" in argv:
        folder = argv[argv.index("--swig") + 1]
        os.makedirs(folder, exist_ok=True)
        for name, text in swig.interface_files(api).items():
            _write_if_changed(os.path.join(folder, name), text)
        return 0
    stale = []
    for rel, text in outputs(api).items():
        path = os.path.join(ROOT, rel)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale.append(rel)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {rel}")
    if stale:
        print("api/generate.py: these generated files are out of date (run python3 "
              "api/generate.py and commit them):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
