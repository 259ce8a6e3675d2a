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
the module itself, its defaults included).

With --check, a hand-written C++ function or Model method (kbackend.hpp, kbackend_models.hpp) or
C# Model method whose default argument differs from api/kbackend.toml's (a Keras default, an
option set's) fails too, and so does a literal that any language's hand-written code passes to a
C function for a parameter the description gives a default (Java's `K.model_save(this, path,
false)` where include_optimizer is described as true): the layers generated from the description
cannot drift, and these must not.
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
        texts = [_read([rel]) for rel in cpp.HANDWRITTEN + (cpp.GENERATED, cpp.MODEL_GENERATED)]
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


# ---- defaults: the hand-written layers' default arguments against the description -----------

def _split_params(text):
    """A parameter list split at its top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{<"
        depth -= ch in ")]}>"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [p for p in out + [cur.strip()] if p]


_NONE = {"std::nullopt", "IntList()", "Axes()", "{}", '""', "null", "nullptr"}


def _value(text):
    """A default written in C++ or C# as what the description would say: None, a bool, a number,
    an enum's member or a string (lower case), or a flat tuple of numbers."""
    t = text.strip()
    if t in _NONE or re.fullmatch(r"\w+::none", t):
        return None
    if t in ("true", "false"):
        return t == "true"
    if t == "std::numeric_limits<double>::infinity()":
        return float("inf")
    if re.fullmatch(r"-?[\d.]+(e-?\d+)?[fFLl]?", t):
        return float(t.rstrip("fFLl"))
    m = re.fullmatch(r"\w+(?:::|\.)(\w+)", t)
    if m:
        return m.group(1).lower().rstrip("_")
    if re.fullmatch(r'"[^"]*"', t):
        return t[1:-1].lower()
    if t.startswith("{"):
        nums = re.findall(r"-?[\d.]+", t)
        return tuple(float(n) for n in nums)
    return t


def _described(v):
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        return v.lower()
    return tuple(float(x) for x in re.findall(r"-?[\d.]+", str(v)))


def _camel(name):
    parts = name.split("_")
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def _defaults_of(text, pattern):
    """{function name: {parameter: default text}} of the definitions `pattern` finds (groups:
    name, parameter list)."""
    out = {}
    for m in re.finditer(pattern, text, re.M | re.S):
        params = {}
        for p in _split_params(m.group(2)):
            if "=" in p:
                head, default = p.split("=", 1)
                params[head.split()[-1].lstrip("&*")] = default.strip()
        out.setdefault(m.group(1), []).append(params)
    return out


def drifted_defaults(language, api):
    """[(function, parameter, its default, the description's)] where a hand-written function
    of `language` gives an argument another default than api/kbackend.toml does: a Keras
    function's (C++), or an option set's (the Model methods of C++ and C#)."""
    rows = []

    def compare(where, params, described, rename=lambda n: n):
        for name, want in described.items():
            got = params.get(rename(name))
            if got is not None and _value(got) != _described(want):
                rows.append((where, rename(name), got, want))

    if language == "cpp":
        text = _read(list(cpp.HANDWRITTEN))
        found = _defaults_of(text, r"^inline [^;{(]*?\b(\w+)\("
                                   r"((?:[^;{]|\{(?:[^{}]|\{[^{}]*\})*\})*?)\)\s*(?:const\s*)?\{")
        for fn in api.functions:
            described = {}
            for a in fn.args:
                if not a.required:
                    described[a.name] = a.default
                    described[a.c_name] = a.default
            for params in found.get(cpp.ident(fn.name), []):
                compare(fn.name, params, described)
        members = _defaults_of(text, r"^\s+[^;{(=]*?\b(\w+)\(((?:[^;{]|\{[^{}]*\})*?)\)\s*"
                                     r"(?:const\s*)?\{")
        for option_set in api.options.values():
            described = {k.name: k.default for k in option_set.keys if k.has_default}
            for params in members.get(option_set.name, []):
                compare(f"Model::{option_set.name}", params, described)
    if language == "csharp":
        text = _read(["bindings/swig/csharp_code.i"])
        found = _defaults_of(text, r"^\s*public [^;{(=]*?\b(\w+)\(((?:[^;{]|\{[^{}]*\})*?)\)\s*\{")
        for option_set in api.options.values():
            described = {k.name: k.default for k in option_set.keys if k.has_default}
            for params in found.get(option_set.name.capitalize(), []):
                compare(f"Model.{option_set.name.capitalize()}", params, described, _camel)
    return rows


# ---- literals: a value the hand-written layers pass to a C function for a described default ---

# Each language's hand-written code (generated files named by their header are left out), and
# how it calls a C function: the call's name group and where its argument list starts.
_CALLS = {
    "rust": (["bindings/rust/kbackend/src/*.rs"], r"\bsys::(kb_\w+)\("),
    "go": (["bindings/go/kbackend/*.go"], r"\bC\.(kb_\w+)\("),
    "cpp": (list(cpp.HANDWRITTEN), r"(?<![\w:])(kb_\w+)\("),
    "java": (["bindings/swig/java_code.i", "bindings/swig/kbackend_java.i"], r"\bK\.(\w+)\("),
    "csharp": (["bindings/swig/csharp_code.i", "bindings/swig/kbackend_csharp.i"],
               r"\bK\.(\w+)\("),
}
# The SWIG class whose methods Java's and C#'s code calls as K.NAME: their parameter names are
# the C ones, arrays and their sizes one parameter, results returned.
_SWIG_CLASSES = {"java": "bindings/java/**/K.java", "csharp": "bindings/csharp/**/K.cs"}


def _handwritten(patterns):
    text = ""
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            with open(path, encoding="utf-8") as f:
                body = f.read()
            if "Generated by api/generate.py" not in body[:300]:
                text += body
    return text


def _call_args(text, start):
    """The argument list of the call whose "(" is at text[start - 1], split at its commas."""
    depth, i = 1, start
    while i < len(text) and depth:
        depth += text[i] in "([{"
        depth -= text[i] in ")]}"
        i += 1
    return _split_params(text[start:i - 1])


def _swig_params(language):
    """{C function: [parameter names of its K method]} from SWIG's generated class."""
    out = {}
    for path in glob.glob(os.path.join(BUILD, _SWIG_CLASSES[language]), recursive=True):
        with open(path, encoding="utf-8") as f:
            for m in re.finditer(r"public static [^(]*?\b(\w+)\(([^)]*)\)", f.read()):
                out["kb_" + m.group(1)] = [p.split()[-1] for p in _split_params(m.group(2))]
    return out


_LITERAL = re.compile(r"-?\d+(\.\d+)?[fFLl]?|true|false")


def described_defaults(api):
    """{C function: {C parameter: Keras' default}}: a Keras function's defaults, and the
    arguments of the option set a function takes."""
    out = {}
    for fn in api.functions:
        d = {a.c_name: a.default for a in fn.args if not a.required and a.default is not None}
        if fn.options:
            d.update({k.name: k.default for k in api.options[fn.options].keys if k.argument})
        if d:
            out[fn.c_name] = d
    return out


def drifted_literals(language, api):
    """[(where, parameter, the literal, the description's default)] for each literal number or
    bool that `language`'s hand-written code passes to a C function for a parameter the
    description gives a default: a default restated by hand must be the described one."""
    patterns, call = _CALLS[language]
    text = _handwritten(patterns)
    described = described_defaults(api)
    c_params = {f.c_name: [p.name for p in f.c.params] for f in api.functions}
    if language in _SWIG_CLASSES:
        c_params = _swig_params(language)
    rows = []
    for m in re.finditer(call, text):
        name = m.group(1) if m.group(1).startswith("kb_") else "kb_" + m.group(1)
        if name not in described or name not in c_params:
            continue
        params = c_params[name]
        args = _call_args(text, m.end())
        for param, arg in zip(params, args):
            want = described[name].get(param)
            if want is None or not _LITERAL.fullmatch(arg.strip()):
                continue
            got = _value(arg)
            if isinstance(want, bool) and isinstance(got, float):
                got = bool(got)
            if got != _described(want):
                rows.append((name, param, arg.strip(), want))
    return rows


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
        drifted = drifted_defaults(language, api) if language in ("cpp", "csharp") else []
        drifted += [(f"{f} (a literal)", p, got, want)
                    for f, p, got, want in drifted_literals(language, api)]
        if language in check and drifted:
            failed = True
            print(f"  {language} gives other defaults than api/kbackend.toml (make them the "
                  "described ones, or let the generator write the function):\n    " +
                  "\n    ".join(f"{f}({p} = {got}): described {want!r}"
                                 for f, p, got, want in drifted))
        if language in check and closed:
            failed = True
            print(f"  {language} now reaches these; remove them from [gaps] {language} in "
                  "api/kbackend.toml:\n    " + "\n    ".join(closed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
