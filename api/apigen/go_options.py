"""Go: the option sets of api/kbackend.toml as structs (`FitOptions`, `CompileOptions`) with a
constructor of Keras' defaults, each writing its options_json."""
import subprocess

from .go import HEADER, exported

GENERATED = "bindings/go/kbackend/options.go"

_TYPES = {"bool": "bool", "int": "int64", "number": "float64", "object": "string", "callbacks": "string",
          "numbers": "[]float64", "class_weights": "map[int64]float64"}
_ADD = {"bool": "boolean", "int": "integer", "number": "number", "object": "object", "callbacks": "object",
        "numbers": "numbers", "class_weights": "classWeights"}

_PRELUDE = '''
package kbackend

import (
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

// object takes a JSON value's text (an optimizer's config, the callbacks' list); empty:
// left out.
func (j *optionsJSON) object(key string, v string) {
	if v != "" {
		j.put(key, v)
	}
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


def options_file(api):
    out = [HEADER, _PRELUDE]
    for s in api.options.values():
        name = s.type_name()
        fields = "".join(f"\t// {exported(k.name)}: {k.doc}\n\t{exported(k.name)} "
                         f"{_TYPES[k.type]}\n" for k in s.keys)
        defaults = "".join(f"{exported(k.name)}: {k.literal()}, " for k in s.keys
                           if k.has_default)
        adds = "".join(f'\tj.{_ADD[k.type]}("{k.name}", o.{exported(k.name)})\n'
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
    return subprocess.run(["gofmt"], input="".join(out), capture_output=True, text=True,
                          check=True).stdout
