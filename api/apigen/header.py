"""The one reader of include/kbackend.h.

The header follows fixed conventions (docs/architecture.md, "The C ABI"): `KB_API` declarations,
`typedef enum` option types, `typedef struct X X` handles, function-pointer typedefs, and
fixed-width integer, size_t, double, char and void pointer types. Its `/* ---- name ----` banners
split it into families. Anything else is an error here rather than a guess, so that a
declaration no generator understands cannot slip through.
"""
import re
from dataclasses import dataclass, field

_BASE_TYPES = {"void", "char", "int", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
               "uint16_t", "uint32_t", "uint64_t", "size_t", "float", "double"}


@dataclass
class CType:
    """A C type as its base name, whether the base is const, and one flag per `*` (const or not)."""
    base: str
    const: bool = False
    pointers: tuple = ()

    @property
    def depth(self):
        return len(self.pointers)

    def __str__(self):
        text = ("const " if self.const else "") + self.base
        for is_const in self.pointers:
            text += "*" + (" const" if is_const else "")
        return text


@dataclass
class Param:
    name: str
    type: CType


@dataclass
class Function:
    name: str
    returns: CType
    params: list
    family: str
    comment: str = ""  # the trailing /* ... */ of its declaration, if any


@dataclass
class Enum:
    name: str
    items: list  # [(C name, value)]


@dataclass
class Callback:
    name: str
    returns: CType
    params: list


@dataclass
class Header:
    functions: list = field(default_factory=list)
    enums: list = field(default_factory=list)
    handles: list = field(default_factory=list)
    callbacks: list = field(default_factory=list)
    defines: dict = field(default_factory=dict)
    # {family: (banner title, the prose that follows the banner)}, in the header's order
    families: dict = field(default_factory=dict)


def _family_name(banner):
    """'reduce: axes NULL = all axes' -> 'reduce'; 'convolution, pooling' -> 'convolution'."""
    name = re.split(r"[:,(]", banner)[0].strip().lower()
    return re.sub(r"[^a-z0-9]+", "_", name).strip("_")


def _parse_type(tokens, known, where):
    base, const, pointers = None, False, []
    for tok in tokens:
        if tok == "const":
            if pointers:
                pointers[-1] = True
            else:
                const = True
        elif tok == "*":
            pointers.append(False)
        elif tok in ("struct", "enum"):
            continue
        elif base is None and (tok in _BASE_TYPES or tok in known):
            base = tok
        else:
            raise ValueError(f"kbackend.h: {where}: type token {tok!r} is not one the "
                             "header's conventions allow")
    if base is None:
        raise ValueError(f"kbackend.h: {where}: no type")
    return CType(base, const, tuple(pointers))


def _tokens(text):
    return re.findall(r"[A-Za-z_]\w*|-?\d+|\S", text)


def _parse_params(text, known, where):
    text = text.strip()
    if text in ("", "void"):
        return []
    params = []
    for k, part in enumerate(text.split(",")):
        toks = _tokens(part)
        if len(toks) >= 2 and toks[-1] not in ("*",) and toks[-1] not in _BASE_TYPES \
                and toks[-1] not in known:
            name, type_toks = toks[-1], toks[:-1]
        else:
            name, type_toks = f"arg{k}", toks
        params.append(Param(name, _parse_type(type_toks, known, f"{where}, {name}")))
    return params


def parse(text):
    """The header's declarations, in order."""
    header = Header()
    # Statements at brace depth 0, each with the family banner it comes under and the comment
    # that ends its line.
    family, depth, stmt, trailing = "", 0, "", ""
    statements = []
    pos = 0
    n = len(text)
    while pos < n:
        if text.startswith("/*", pos):
            end = text.find("*/", pos)
            end = n if end < 0 else end + 2
            comment = text[pos + 2:end - 2]
            banner = re.match(r"\s*----\s*(.*?)\s*-{3,}", comment)
            if banner:
                family = _family_name(banner.group(1))
                prose = re.sub(r"^\s*\*\s?", "", comment[banner.end():], flags=re.M)
                title, old = header.families.get(family, (banner.group(1), ""))
                header.families[family] = (title, (old + "\n" + prose).strip())
            elif not stmt.strip() and statements and "\n" not in text[statements[-1][3]:pos]:
                statements[-1][2] = " ".join(comment.lstrip("*<").split())
            pos = end
            continue
        if text.startswith("//", pos):
            pos = text.find("\n", pos)
            pos = n if pos < 0 else pos
            continue
        c = text[pos]
        if c == "#" and not stmt.strip():
            end = text.find("\n", pos)
            end = n if end < 0 else end
            line = text[pos:end]
            m = re.match(r"#define\s+(KB_\w+)\s+(-?\d+)\s*$", line)
            if m:
                header.defines[m.group(1)] = int(m.group(2))
            pos = end
            continue
        if c == "{" and depth == 0 and stmt.strip() == 'extern "C"':
            stmt = ""  # its closing brace makes depth -1 below
            pos += 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:  # the closing brace of extern "C"
                depth = 0
                stmt = ""
                pos += 1
                continue
        if c == ";" and depth == 0:
            statements.append([" ".join(stmt.split()), family, trailing, pos + 1])
            stmt = ""
        else:
            stmt += c
        pos += 1

    known = set()
    for s, _, _, _ in statements:
        m = re.match(r"typedef (?:enum|struct) \w+ .*?(\w+)$", s, re.S)
        if m:
            known.add(m.group(1))
        m = re.match(r"typedef .*?\(\*(\w+)\)", s)
        if m:
            known.add(m.group(1))

    for s, fam, comment, _ in statements:
        if s.startswith("typedef enum"):
            m = re.match(r"typedef enum \w+ \{(.*)\} (\w+)$", s)
            items, value = [], 0
            for entry in m.group(1).split(","):
                entry = entry.strip()
                if not entry:
                    continue
                name, _, val = entry.partition("=")
                # an integer expression such as -2147483647 - 1 (no names to look up)
                value = eval(val.strip(), {"__builtins__": {}}) if val.strip() else value
                items.append((name.strip(), value))
                value += 1
            header.enums.append(Enum(m.group(2), items))
        elif s.startswith("typedef struct"):
            header.handles.append(s.split()[-1])
        elif s.startswith("typedef"):
            m = re.match(r"typedef (.*?)\(\*(\w+)\)\s*\((.*)\)$", s)
            if not m:
                raise ValueError(f"kbackend.h: typedef not understood: {s}")
            header.callbacks.append(Callback(
                m.group(2), _parse_type(_tokens(m.group(1)), known, m.group(2)),
                _parse_params(m.group(3), known, m.group(2))))
        elif s.startswith("KB_API"):
            m = re.match(r"KB_API (.*?)(\w+)\s*\((.*)\)$", s)
            if not m:
                raise ValueError(f"kbackend.h: declaration not understood: {s}")
            name = m.group(2)
            header.functions.append(Function(
                name, _parse_type(_tokens(m.group(1)), known, name),
                _parse_params(m.group(3), known, name), fam, comment))
    return header


def read(path):
    with open(path, encoding="utf-8") as f:
        return parse(f.read())
