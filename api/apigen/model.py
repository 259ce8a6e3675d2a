"""The API as the generators see it: the header's functions grouped into logical arguments, with
the Keras names, defaults and notes of api/kbackend.toml.

A logical argument is what a caller of any language passes as one value: a tensor, a list of
tensors (`kb_tensor* const*` + count), a list of integers (`const int64_t*` + count, several
pointers sharing one count when they precede it), an optional scalar (an unsized `const T*`), a
scalar, an option enum, a string, a callback with its `void*` data, or raw data. Results are the
trailing pointer parameters the function writes.
"""
import ast
import os
import tomllib
from dataclasses import dataclass, field

from . import header as header_mod

_EMPTY = object()  # no default: the argument is required


@dataclass
class Arg:
    name: str          # the Keras name (the C name unless the description renames it)
    c_name: str        # the C parameter (the pointer's, for an array)
    kind: str          # tensor, tensors, ints, pair, opt_int, opt_double, int, int32, bool,
    #                    double, size, enum, string, callback, data, handle, raw
    c_type: header_mod.CType
    count: str = ""    # ints/tensors: the C parameter holding the count
    enum: str = ""     # enum: the C enum type
    default: object = _EMPTY
    optional: bool = False  # NULL (None) allowed

    @property
    def required(self):
        return self.default is _EMPTY


@dataclass
class Result:
    c_name: str
    kind: str    # tensor, tensors, int, int32, bool, double, size, enum, string, handle, raw
    c_type: header_mod.CType
    enum: str = ""


# "string" and "int_or_string" are for the callbacks' configs; "callbacks" is fit's list of
# {"class_name", "config"} objects.
OPTION_TYPES = ("bool", "int", "number", "string", "int_or_string", "object", "numbers",
                "class_weights", "callbacks")
CALLBACK_ONLY_TYPES = ("string", "int_or_string")


@dataclass
class OptionKey:
    """One key of an options_json object ([options.SET] of api/kbackend.toml)."""
    name: str
    type: str          # one of OPTION_TYPES
    doc: str
    default: object = _EMPTY  # Keras' default; _EMPTY: the key is left out unless given
    argument: bool = False    # a C parameter of the functions, not a key of options_json

    @property
    def has_default(self):
        return self.default is not _EMPTY

    def literal(self, int_suffix=""):
        """Keras' default as C-family source text (true, 0.25, 32 + int_suffix); "" without
        one."""
        if not self.has_default:
            return ""
        if self.type == "bool":
            return "true" if self.default else "false"
        if self.type == "number":
            return repr(float(self.default))
        return f"{int(self.default)}{int_suffix}"


@dataclass
class OptionSet:
    """The keys one options_json parameter takes (compile's, fit's), or the arguments alone of
    functions without one (evaluate's)."""
    name: str
    keys: list  # OptionKeys: the C arguments among them too (`argument`)

    def type_name(self, suffix="Options"):
        """The name of the set's struct or class in a language: FitOptions (C++: FitArguments,
        its FitOptions adding the arrays and the callback)."""
        return "".join(w.capitalize() for w in self.name.split("_")) + suffix

    def json_keys(self):
        """The keys options_json may hold."""
        return [k for k in self.keys if not k.argument]

    def taken_as(self, quote=""):
        """How the functions take these values, as a doc says it."""
        if not self.json_keys():
            return "as arguments"
        return f"as arguments and as the keys of {quote}options_json{quote}"


@dataclass
class Function:
    c_name: str
    name: str      # Keras' name
    family: str
    doc: str       # one line from api/kbackend.toml [docs]
    args: list
    results: list
    returns: header_mod.CType   # the C return type (kb_status for most)
    c: header_mod.Function = None
    keras: str = ""  # Keras' signature as api/kbackend.toml gives it, if it does
    in_keras: bool = False  # a function of Keras' backend (tests/reference/keras_functions.txt)
    options: str = ""  # the option set its options_json parameter takes, if it has one

    @property
    def status(self):
        return self.returns.base == "kb_status" and self.returns.depth == 0

    def signature(self):
        """Keras-style: conv1d(x, kernel, strides=1, padding="valid", ...)."""
        def default(v):
            return f'"{v}"' if isinstance(v, str) else repr(v)
        parts = [a.name if a.required else f"{a.name}={default(a.default)}" for a in self.args]
        return f"{self.name}({', '.join(parts)})"

    def reference(self):
        """Where the function comes from, for doc comments: Keras' signature and the C name."""
        if self.in_keras:
            return f"Keras' {self.signature()} (C: {self.c_name})"
        return f"{self.c_name}: {self.signature()}"


    def uses_only(self, arg_kinds, result_kinds, args=None):
        """Whether the arguments (`args`, default all) and results are of kinds a generator
        can write."""
        args = self.args if args is None else args
        return (all(a.kind in arg_kinds for a in args)
                and all(r.kind in result_kinds for r in self.results))

    def shared_counts(self):
        """{count parameter: [its list arguments]}: lists C reads with one count."""
        groups = {}
        for a in self.args:
            if a.kind == "ints":
                groups.setdefault(a.count, []).append(a)
        return groups


def enum_items(enum):
    """[(suffix, C item, value)] of an option enum without its int32-width sentinel: the suffix
    is the item's name after the prefix all items share, in lower case ("nearest" for
    KB_INTERPOLATION_NEAREST), and "default" for a *_DEFAULT item."""
    items = [(n, v) for n, v in enum.items if "FORCE_INT32" not in n]
    names = [n for n, _ in items if not n.endswith("_DEFAULT")]
    prefix = names[0]
    for n in names[1:]:
        while not n.startswith(prefix):
            prefix = prefix[:-1]
    prefix = prefix[:prefix.rfind("_") + 1]
    return [("default" if n.endswith("_DEFAULT") else n[len(prefix):].lower(), n, v)
            for n, v in items]


@dataclass
class Api:
    header: header_mod.Header
    functions: list
    exclude: dict = field(default_factory=dict)  # language -> {keras name: reason}
    gaps: dict = field(default_factory=dict)     # language -> [keras names not wrapped yet]
    flags: set = field(default_factory=set)
    options: dict = field(default_factory=dict)  # option set name -> OptionSet
    # Keras callback class name -> OptionSet of its arguments ([callbacks.CLASS])
    callbacks: dict = field(default_factory=dict)
    # kb_status item (KB_ERROR_NOT_FOUND) -> {language: its error} ([errors])
    errors: dict = field(default_factory=dict)

    def option_enums(self):
        """The header's enums that arguments and results take (kb_status is the errors')."""
        return [e for e in self.header.enums if e.name != "kb_status"]

    def status_items(self):
        """[(C item, value)] of kb_status's failures (its int32-width sentinels left out)."""
        status = next(e for e in self.header.enums if e.name == "kb_status")
        return [(n, v) for n, v in status.items if n.startswith("KB_ERROR_")]

    def error_of(self, item, language):
        """What `language` raises for a kb_status item, or None for its own kbackend error."""
        return self.errors.get(item, {}).get(language)

    def option_takers(self, option_set, quote=""):
        """The C functions taking an option set, as a doc says it: "kb_model_compile takes",
        "kb_model_fit and kb_model_fit_weighted take"."""
        names = [f"{quote}{f.c_name}{quote}" for f in self.functions if f.options == option_set]
        return " and ".join(names) + (" takes" if len(names) == 1 else " take")

    def excluded(self, language):
        """Keras names of the functions `language` leaves out on purpose."""
        return set(self.exclude.get("all", {})) | set(self.exclude.get(language, {}))


def _keras_spec(text, name):
    """'(x, axis: "axes" = None)' -> [(keras name, C name, default)]."""
    tree = ast.parse(f"def {name}{text}: pass").body[0]
    args = tree.args.args
    defaults = [ast.literal_eval(d) for d in tree.args.defaults]
    defaults = [_EMPTY] * (len(args) - len(defaults)) + defaults
    return [(a.arg, a.annotation.value if a.annotation else a.arg, d)
            for a, d in zip(args, defaults)]


_SCALAR_RESULTS = {"int32_t": "int32", "int64_t": "int", "uint64_t": "uint64", "double": "double",
                   "size_t": "size"}


def _result_kind(t, enums, handles):
    """The kind of an out-parameter (`T* out`, `handle** out`, `const char** out`), else None."""
    if any(t.pointers):
        return None
    if t.depth == 2 and t.base in handles and not t.const:
        return {"kb_tensor": "tensor", "kb_tensor_list": "tensors"}.get(t.base, "handle")
    if t.depth == 2 and t.base == "char" and t.const:
        return "string"
    if t.depth == 1 and not t.const:
        return "enum" if t.base in enums else _SCALAR_RESULTS.get(t.base)
    return None


def _group(fn, enums, handles, callbacks, flags, notes):
    """The logical arguments and results of a header function."""
    params = fn.params
    args, results = [], []
    i = 0
    pairs = set(notes.get("pairs", ()))
    optional = set(notes.get("optional", ()))
    # Results: the trailing run of out-parameters.
    n_in = len(params)
    while n_in and _result_kind(params[n_in - 1].type, enums, handles):
        n_in -= 1
    trailing = []
    for p in params[n_in:]:
        kind = _result_kind(p.type, enums, handles)
        if kind == "int32" and (p.name in flags or notes.get("bool")):
            kind = "bool"
        trailing.append(Result(p.name, kind, p.type, p.type.base if kind == "enum" else ""))
    while i < n_in:
        p, t = params[i], params[i].type
        base = t.base
        nxt = params[i + 1] if i + 1 < len(params) else None
        if str(t) == "kb_tensor*":
            args.append(Arg(p.name, p.name, "tensor", t, optional=p.name in optional))
        elif str(t) == "kb_tensor* const*" and nxt and str(nxt.type) == "size_t":
            args.append(Arg(p.name, p.name, "tensors", t, count=nxt.name))
            i += 1
        elif base == "int64_t" and t.const and t.depth == 1:
            # one or more arrays sharing the size_t that follows them
            group = [p]
            j = i + 1
            while j < len(params) and str(params[j].type) == "const int64_t*":
                group.append(params[j])
                j += 1
            if j < len(params) and str(params[j].type) == "size_t":
                for q in group:
                    args.append(Arg(q.name, q.name, "ints", q.type, count=params[j].name))
                i = j
            elif p.name in pairs:
                args.append(Arg(p.name, p.name, "pair", t, optional=True))
            else:
                args.append(Arg(p.name, p.name, "opt_int", t, optional=True))
        elif base == "void" and t.const and t.depth == 1 and nxt \
                and nxt.type.base == "kb_data_type":
            # raw data: (data, dtype, shape, ndim) or (data, dtype, count)
            take = 2
            rest = [str(q.type) for q in params[i + 2:i + 4]]
            if rest == ["const int64_t*", "size_t"]:
                take = 4
            elif rest[:1] == ["size_t"]:
                take = 3
            args.append(Arg(p.name, p.name, "data", t,
                            count=",".join(q.name for q in params[i + 1:i + take])))
            i += take
            continue
        elif base == "void" and not t.const and t.depth == 1 and nxt is None:
            results.append(Result(p.name, "data", t))  # sized by the data argument
        elif base == "void" and not t.const and t.depth == 1 and str(nxt.type) == "size_t":
            args.append(Arg(p.name, p.name, "buffer", t, count=nxt.name))
            i += 1
        elif base == "void" and t.const and t.depth == 1 and \
                [str(q.type) for q in params[i + 1:i + 4]] == ["void*", "size_t", "kb_data_type"]:
            # (values, result, count, dtype): an array in, one of its dtype and size out
            args.append(Arg(p.name, p.name, "data", t,
                            count=",".join(q.name for q in params[i + 2:i + 4])))
            results.append(Result(params[i + 1].name, "data", params[i + 1].type))
            i += 4
            continue
        elif base == "double" and t.const and t.depth == 1:
            args.append(Arg(p.name, p.name, "opt_double", t, optional=True))
        elif t.depth == 0 and base in enums:
            # a dtype is Keras' dtype=None (floatx) unless the Keras signature requires it
            args.append(Arg(p.name, p.name, "enum", t, enum=base,
                            optional=base == "kb_data_type" and p.name == "dtype"))
        elif t.depth == 0 and base == "int64_t":
            args.append(Arg(p.name, p.name, "int", t))
        elif t.depth == 0 and base == "int32_t":
            args.append(Arg(p.name, p.name, "bool" if p.name in flags else "int32", t))
        elif t.depth == 0 and base == "double":
            args.append(Arg(p.name, p.name, "double", t))
        elif t.depth == 0 and base == "size_t":
            args.append(Arg(p.name, p.name, "size", t))
        elif base == "char" and t.const and t.depth == 1:
            # a graph name is optional (Keras' name=None) unless the description requires it
            args.append(Arg(p.name, p.name, "string", t, optional=p.name in optional or (
                p.name == "name" and p.name not in notes.get("required", ()))))
        elif base in callbacks and nxt and str(nxt.type) == "void*":
            args.append(Arg(p.name, p.name, "callback", t, count=nxt.name))
            i += 1
        elif base in handles and t.depth == 1:
            args.append(Arg(p.name, p.name, "handle", t))
        else:
            args.append(Arg(p.name, p.name, "raw", t))
        i += 1
    return args, results + trailing


_OPTION_DEFAULTS = {"bool": (bool,), "int": (int,), "number": (int, float), "string": (str,),
                    "int_or_string": (int, str)}


def _option_sets(desc, section="options"):
    """[options.SET] (or [callbacks.CLASS]) as OptionSets, each key's type and default
    checked."""
    sets = {}
    for set_name, keys in desc.get(section, {}).items():
        rows = []
        for key, row in keys.items():
            where = f"kbackend.toml [{section}.{set_name}] {key}"
            if row.get("type") not in OPTION_TYPES:
                raise ValueError(f"{where}: type {row.get('type')!r} is not one of {OPTION_TYPES}")
            if section == "options" and row["type"] in CALLBACK_ONLY_TYPES:
                raise ValueError(f"{where}: {row['type']} is a type of the callbacks' configs")
            if section == "callbacks" and row["type"] not in CALLBACK_ONLY_TYPES + (
                    "bool", "int", "number"):
                raise ValueError(f"{where}: a callback's argument is a bool, a number or a "
                                 "string")
            if not row.get("doc"):
                raise ValueError(f"{where}: no doc")
            unknown = set(row) - {"type", "default", "doc", "argument"}
            if unknown:
                raise ValueError(f"{where}: unknown fields {sorted(unknown)}")
            default = row.get("default", _EMPTY)
            if default is not _EMPTY:
                ok = _OPTION_DEFAULTS.get(row["type"], ())
                if not isinstance(default, ok) or (row["type"] != "bool" and
                                                   isinstance(default, bool)):
                    raise ValueError(f"{where}: default {default!r} is not a {row['type']}")
            if row.get("argument") and (default is _EMPTY or row["type"] not in _OPTION_DEFAULTS):
                raise ValueError(f"{where}: an argument is a bool or a number with a default")
            rows.append(OptionKey(key, row["type"], row["doc"], default, bool(row.get("argument"))))
        sets[set_name] = OptionSet(set_name, rows)
    return sets


_ERROR_LANGUAGES = {"python", "java", "csharp", "go", "rust"}


def _errors(desc, hdr):
    """[errors] keyed by the kb_status item each row names, the rows checked."""
    status = next(e for e in hdr.enums if e.name == "kb_status")
    items = {n for n, _ in status.items}
    out = {}
    for key, row in desc.get("errors", {}).items():
        item = "KB_ERROR_" + key.upper()
        if item not in items:
            raise ValueError(f"kbackend.toml [errors] {key}: kb_status has no {item}")
        unknown = set(row) - _ERROR_LANGUAGES
        if unknown:
            raise ValueError(f"kbackend.toml [errors] {key}: unknown languages {sorted(unknown)}")
        out[item] = dict(row)
    return out


def _keras_functions(path):
    with open(path, encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def load(header_path, description_path, keras_functions_path):
    """keras_functions_path: the names of Keras' backend functions, one per line."""
    hdr = header_mod.read(header_path)
    keras = _keras_functions(keras_functions_path)
    with open(description_path, "rb") as f:
        desc = tomllib.load(f)
    flags = set(desc.get("flags", ()))
    notes = desc.get("functions", {})
    enums = {e.name for e in hdr.enums}
    callbacks = {c.name for c in hdr.callbacks}
    handles = set(hdr.handles)
    names = {f.name[3:] for f in hdr.functions}
    unknown = sorted(set(notes) - names)
    if unknown:
        raise ValueError(f"kbackend.toml describes functions the header lacks: {unknown}")
    docs = desc.get("docs", {})
    undocumented = sorted(names - set(docs))
    if undocumented or set(docs) - names:
        raise ValueError(f"kbackend.toml [docs]: no line for {undocumented}, lines for functions "
                         f"the header lacks: {sorted(set(docs) - names)}")
    option_sets = _option_sets(desc)
    functions = []
    for fn in hdr.functions:
        short = fn.name[3:]
        note = notes.get(short, {})
        args, results = _group(fn, enums, handles, callbacks, flags, note)
        if "keras" in note:
            spec = _keras_spec(note["keras"], short)
            by_c = {a.c_name: a for a in args}
            missing = set(by_c) - {c for _, c, _ in spec}
            extra = {c for _, c, _ in spec} - set(by_c)
            if missing or extra:
                raise ValueError(f"kbackend.toml: the Keras signature of {short} does not match "
                                 f"kb_{short} (missing {sorted(missing)}, unknown {sorted(extra)})")
            ordered = []
            for keras_name, c_name, default in spec:
                a = by_c[c_name]
                a.name, a.default = keras_name, default
                a.optional = default is None or c_name in note.get("optional", ())
                ordered.append(a)
            args = ordered
        name = note.get("name", short)
        option_set = note.get("options", "")
        if option_set and (option_set not in option_sets or
                           (option_sets[option_set].json_keys() and
                            "options_json" not in {a.c_name for a in args})):
            raise ValueError(f"kbackend.toml: {short} takes options {option_set!r}, but the set "
                             f"is not described or kb_{short} has no options_json")
        if option_set:
            lacking = [k.name for k in option_sets[option_set].keys
                       if k.argument and k.name not in {a.c_name for a in args}]
            if lacking:
                raise ValueError(f"kbackend.toml [options.{option_set}]: kb_{short} has no "
                                 f"parameters {lacking}")
        functions.append(Function(fn.name, name, fn.family, docs[short], args,
                                  results, fn.returns, fn, note.get("keras", ""),
                                  name in keras, option_set))
    exclude = {lang: dict(table) for lang, table in desc.get("exclude", {}).items()}
    gaps = {lang: list(names) for lang, names in desc.get("gaps", {}).items()}
    taking = {f.c_name for f in functions if f.options}
    untold = [f.c_name for f in functions
              if "options_json" in {a.c_name for a in f.args} and f.c_name not in taking]
    if untold:
        raise ValueError(f"kbackend.toml: say which option set these take: {untold}")
    return Api(hdr, functions, exclude=exclude, flags=flags, gaps=gaps, options=option_sets,
               callbacks=_option_sets(desc, "callbacks"), errors=_errors(desc, hdr))


def load_repository(root):
    """The API of the repository at root: its header, description and Keras' function names."""
    return load(os.path.join(root, "include", "kbackend.h"),
                os.path.join(root, "api", "kbackend.toml"),
                os.path.join(root, "tests", "reference", "keras_functions.txt"))
