#!/usr/bin/env python3
"""Which C functions each language's layer reaches, against the header.

  python3 api/parity.py                  the table of every language
  python3 api/parity.py --check rust,cpp  fail (exit 1) for a C function one of these languages
                                          misses that api/kbackend.toml neither excludes (with
                                          a reason) nor lists among its gaps, and for a listed
                                          gap the language now reaches (the list only shrinks)

  python3 api/parity.py --check java,csharp   the same for Java and C#, once build-bind has
                                              their SWIG wrappers (run_jvm_dotnet_go.sh)

A language reaches a C function when its layer calls it: Rust `sys::kb_NAME` (the generated
`backend` module included), C++ `kb_NAME` named in its headers' code (called or passed on, or
NAME given to one of its macros that paste `kb_##fn`), Go `C.kb_NAME(` (cgo) or `kb_NAME(` in
the package's C files (callbacks), Java and C# `kb_NAME` called by an exported function of
their SWIG wrapper (directly or through bindings/swig's kbx_* helpers).
Python wraps every header function at import (bindings/python/tests/test_api_parity.py checks
the module itself).
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from apigen import cpp, model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(patterns):
    text = ""
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(path, encoding="utf-8") as f:
                text += f.read()
    return text


def reached(language, api):
    names = [f.c_name for f in api.functions]
    if language == "rust":
        text = _read(["bindings/rust/kbackend/src/*.rs"])
        return {n for n in names if re.search(rf"sys::{n}\b", text)}
    if language == "cpp":
        texts = [_read([rel]) for rel in cpp.HANDWRITTEN + (cpp.GENERATED,)]
        return set(names) & cpp.handwritten(texts)[1]
    if language == "go":
        go, c = _read(["bindings/go/kbackend/*.go"]), _read(["bindings/go/kbackend/*.c"])
        return {n for n in names if re.search(rf"\bC\.{n}\(", go) or re.search(rf"\b{n}\(", c)}
    if language in SWIG_WRAPPERS:
        return _swig_reached(os.path.join(BUILD, SWIG_WRAPPERS[language]), set(names))
    raise ValueError(f"unknown language {language}")


# Java and C#: what SWIG's wrapper exports (a JNI or P/Invoke function per method) calls, the
# header's functions directly or through the helpers of bindings/swig (kbx_*), in the wrapper
# that the build generates (run after building them: bindings/run_jvm_dotnet_go.sh).
BUILD = os.path.join(ROOT, "build-bind")
SWIG_WRAPPERS = {"java": "bindings/java/kbackend_java_wrap.cxx",
                 "csharp": "bindings/csharp/kbackend_csharp_wrap.cxx"}


def _swig_reached(path, names):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    calls = re.compile(r"\b(kbx?_[a-z0-9_]+|delete_kb_[a-z0-9_]+)\(")
    # What the helpers call: bindings/swig's `static kbx_NAME(...) {...}` (to the closing brace
    # at column 0), and SWIG's one-line ones (the handles' destructors, delete_kb_model).
    helpers = {}
    for m in re.finditer(r"^static [^\n(]*\b(kbx_[a-z0-9_]+)\([^)]*\)\s*\{(.*?)^\}", text,
                         re.M | re.S):
        helpers[m.group(1)] = set(calls.findall(m.group(2)))
    for m in re.finditer(r"^SWIGINTERN [^\n(]*?\b(\w+)\([^)\n]*\)\s*\{([^\n]*)\}\s*$", text,
                         re.M):
        helpers[m.group(1)] = set(calls.findall(m.group(2)))
    reached, seen = set(), set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        if name in names:
            reached.add(name)
        for callee in helpers.get(name, ()):
            visit(callee)
        if name.startswith("kbx_"):
            visit("kb_" + name[4:])  # the generated helper of kb_NAME (api/apigen/swig.py)

    for chunk in text.split("SWIGEXPORT")[1:]:  # one exported wrapper each
        for name in calls.findall(chunk.split("\n}\n", 1)[0]):
            visit(name)
    return reached


LANGUAGES = ("rust", "cpp", "go", "java", "csharp")


def missing(language, api):
    """(C functions missed and not listed, listed gaps, gaps now reached)"""
    excluded = api.excluded(language)
    gaps = set(api.gaps.get(language, ()))
    got = reached(language, api)
    unlisted, listed, closed = [], [], []
    for f in api.functions:
        if f.name in excluded:
            continue
        if f.c_name not in got:
            (listed if f.name in gaps else unlisted).append(f.c_name)
        elif f.name in gaps:
            closed.append(f.c_name)
    return unlisted, listed, closed


def main(argv):
    api = model.load_repository(ROOT)
    check = []
    if "--check" in argv:
        check = argv[argv.index("--check") + 1].split(",")
    total = len(api.functions)
    failed = False
    for language in LANGUAGES:
        wrapper = os.path.join(BUILD, SWIG_WRAPPERS.get(language, ""))
        if language in SWIG_WRAPPERS and not os.path.exists(wrapper):
            print(f"{language:6} not counted: build it first ({wrapper})")
            if language in check:
                failed = True
            continue
        unlisted, listed, closed = missing(language, api)
        gaps = len(unlisted) + len(listed)
        print(f"{language:6} {total - gaps:4} of {total} C functions reached or excluded, "
              f"{len(listed)} listed as gaps")
        if language in check and unlisted:
            failed = True
            print(f"  missing in {language} (wrap them, or exclude them with a reason in "
                  f"api/kbackend.toml [exclude.{language}]):\n    " + "\n    ".join(unlisted))
        if language in check and closed:
            failed = True
            print(f"  {language} now reaches these; remove them from [gaps] {language} in "
                  "api/kbackend.toml:\n    " + "\n    ".join(closed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
