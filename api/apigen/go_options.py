"""Go: the option sets of api/kbackend.toml as structs (`FitOptions`, `CompileOptions`) with a
constructor of Keras' defaults, each writing its options_json."""
import subprocess

from .go import HEADER, exported

GENERATED = "bindings/go/kbackend/options.go"

_TYPES = {"bool": "bool", "int": "int64", "number": "float64", "object": "string",
          "callbacks": "[]KerasCallback", "string": "string", "int_or_string": "any",
          "numbers": "[]float64", "class_weights": "map[int64]float64"}
_ADD = {"bool": "boolean", "int": "integer", "number": "number", "object": "object",
        "callbacks": "callbacks", "string": "text", "int_or_string": "integerOrText",
        "numbers": "numbers", "class_weights": "classWeights"}


def _type(k):
    """A callback's number without a default is a pointer, nil for Keras' None."""
    return "*float64" if k.type == "number" and not k.has_default else _TYPES[k.type]


def _add(k):
    return "optionalNumber" if k.type == "number" and not k.has_default else _ADD[k.type]


def _literal(k):
    return f'"{k.default}"' if isinstance(k.default, str) else k.literal()

_PRELUDE = '''
package kbackend

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// optionsJSON writes the options_json of a struct of options, one call per key; the first
// value that JSON cannot hold is its error.
type optionsJSON struct {
	who   string
	parts []string
	err   error
}

func (j *optionsJSON) put(key, value string) {
	j.parts = append(j.parts, strconv.Quote(key)+": "+value)
}

func (j *optionsJSON) num(key string, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if j.err == nil {
			j.err = &Error{Status: ErrInvalidArgument,
				Message: fmt.Sprintf("%s: option '%s' is not a finite number", j.who, key)}
		}
		return "0"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (j *optionsJSON) boolean(key string, v bool)    { j.put(key, strconv.FormatBool(v)) }
func (j *optionsJSON) integer(key string, v int64)   { j.put(key, strconv.FormatInt(v, 10)) }
func (j *optionsJSON) number(key string, v float64)  { j.put(key, j.num(key, v)) }

// object takes a JSON object's text (an optimizer's config); empty: left out.
func (j *optionsJSON) object(key string, v string) {
	if v != "" {
		j.put(key, v)
	}
}

// text takes a string (a callback's filepath), written as JSON writes it.
func (j *optionsJSON) text(key string, v string) {
	quoted, _ := json.Marshal(v) // a string always marshals
	j.put(key, string(quoted))
}

func (j *optionsJSON) optionalNumber(key string, v *float64) {
	if v != nil {
		j.number(key, *v)
	}
}

// integerOrText takes an integer or a string (ModelCheckpoint's SaveFreq).
func (j *optionsJSON) integerOrText(key string, v any) {
	switch x := v.(type) {
	case int:
		j.integer(key, int64(x))
	case int64:
		j.integer(key, x)
	case string:
		j.text(key, x)
	default:
		if j.err == nil {
			j.err = &Error{Status: ErrInvalidArgument,
				Message: fmt.Sprintf("%s: option '%s' is not an integer or a string", j.who, key)}
		}
	}
}

func (j *optionsJSON) callbacks(key string, v []KerasCallback) {
	if len(v) == 0 {
		return
	}
	items := make([]string, len(v))
	for i, c := range v {
		text, err := c.CallbackJSON()
		if err != nil && j.err == nil {
			j.err = err
		}
		items[i] = text
	}
	j.put(key, "["+strings.Join(items, ", ")+"]")
}

func (j *optionsJSON) numbers(key string, v []float64) {
	if len(v) == 0 {
		return
	}
	items := make([]string, len(v))
	for i, x := range v {
		items[i] = j.num(key, x)
	}
	j.put(key, "["+strings.Join(items, ", ")+"]")
}

func (j *optionsJSON) classWeights(key string, v map[int64]float64) {
	if len(v) == 0 {
		return
	}
	classes := make([]int64, 0, len(v))
	for c := range v {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(a, b int) bool { return classes[a] < classes[b] })
	items := make([]string, len(classes))
	for i, c := range classes {
		items[i] = strconv.Quote(strconv.FormatInt(c, 10)) + ": " + j.num(key, v[c])
	}
	j.put(key, "{"+strings.Join(items, ", ")+"}")
}

func (j *optionsJSON) finish() (string, error) {
	return "{" + strings.Join(j.parts, ", ") + "}", j.err
}
'''


_CALLBACK_INTERFACE = '''
// KerasCallback is one of Keras' callbacks that fit runs natively (FitOptions.Callbacks):
// EarlyStopping, ModelCheckpoint, ... with Keras 3's arguments and defaults.
type KerasCallback interface {
	// CallbackJSON returns the entry of fit's callbacks option: {"class_name", "config"}.
	CallbackJSON() (string, error)
}
'''


def _callback_types(api):
    out = [_CALLBACK_INTERFACE]
    for s in api.callbacks.values():
        fields = "".join(f"\t// {exported(k.name)}: {k.doc}\n\t{exported(k.name)} "
                         f"{_type(k)}\n" for k in s.keys)
        defaults = "".join(f"{exported(k.name)}: {_literal(k)}, " for k in s.keys
                           if k.has_default)
        adds = "".join(f'\tj.{_add(k)}("{k.name}", c.{exported(k.name)})\n' for k in s.keys)
        out.append(
            f"\n// {s.name} is Keras' {s.name}, run natively by fit, with Keras 3's arguments. "
            f"New{s.name}\n// gives Keras' defaults.\ntype {s.name} struct {{\n{fields}}}\n\n"
            f"// New{s.name} returns {s.name} with Keras' defaults.\n"
            f"func New{s.name}() {s.name} {{\n\treturn {s.name}{{{defaults.rstrip(', ')}}}\n}}\n"
            f"\n// CallbackJSON returns the entry of fit's callbacks option.\n"
            f"func (c {s.name}) CallbackJSON() (string, error) {{\n"
            f'\tj := optionsJSON{{who: "{s.name}"}}\n{adds}\tconfig, err := j.finish()\n'
            f'\treturn `{{"class_name": "{s.name}", "config": ` + config + "}}", err\n}}\n')
    return "".join(out)


def options_file(api):
    out = [HEADER, _PRELUDE]
    for s in api.options.values():
        name = s.type_name()
        fields = "".join(f"\t// {exported(k.name)}: {k.doc}\n\t{exported(k.name)} "
                         f"{_type(k)}\n" for k in s.keys)
        defaults = "".join(f"{exported(k.name)}: {_literal(k)}, " for k in s.keys
                           if k.has_default)
        adds = "".join(f'\tj.{_add(k)}("{k.name}", o.{exported(k.name)})\n'
                       for k in s.json_keys())
        out.append(
            f"\n// {name} holds Keras' {s.name} arguments that are values: what "
            f"{api.option_takers(s.name)}\n// {s.taken_as()}. Default{name} gives "
            f"Keras' defaults.\ntype {name} struct {{\n{fields}}}\n\n"
            f"// Default{name} returns {name} with Keras' defaults.\n"
            f"func Default{name}() {name} {{\n\treturn {name}{{{defaults.rstrip(', ')}}}\n}}\n"
            + (f"\n// OptionsJSON returns the keys of options_json these values set (the C "
               f"arguments left out).\nfunc (o {name}) OptionsJSON() (string, error) {{\n"
               f'\tj := optionsJSON{{who: "{s.name}"}}\n{adds}\treturn j.finish()\n}}\n'
               if adds else ""))
    out.append(_callback_types(api))
    return subprocess.run(["gofmt"], input="".join(out), capture_output=True, text=True,
                          check=True).stdout
