#include "core/model/callbacks/format_path.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/util/error.h"

namespace kb::model {
namespace {

struct Spec {
  char fill = ' ', align = 0, sign = '-', type = 0;
  bool alternate = false;
  int width = 0, precision = -1;
};

bool is_align(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

Spec parse_spec(const std::string& s, const std::string& where) {
  Spec out;
  size_t i = 0;
  if (s.size() >= 2 && is_align(s[1])) {
    out.fill = s[0], out.align = s[1], i = 2;
  } else if (!s.empty() && is_align(s[0])) {
    out.align = s[0], i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) out.sign = s[i++];
  if (i < s.size() && s[i] == '#') out.alternate = true, ++i;
  if (i < s.size() && s[i] == '0') {
    if (!out.align) out.fill = '0', out.align = '=';
    ++i;
  }
  auto digits = [&](int& v) {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - start < 4) v = v * 10 + (s[i++] - '0');
    return i > start;
  };
  digits(out.width);
  if (i < s.size() && s[i] == '.') {
    ++i;
    out.precision = 0;
    check(digits(out.precision), Status::invalid_argument, where, ": format spec '", s,
          "' has no precision after '.'");
  }
  if (i < s.size() && std::string("dxXobeEfFgG%").find(s[i]) != std::string::npos)
    out.type = s[i++];
  check(i == s.size(), Status::invalid_argument, where, ": format spec '", s,
        "' is not one this library formats (fill, align, sign, #, 0, width, precision, type)");
  return out;
}

std::string integer_text(long long v, char type, bool alternate) {
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  int base = type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : type == 'b' ? 2 : 10;
  const char* digits = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[u % unsigned(base)]);
    u /= unsigned(base);
  } while (u > 0);
  if (alternate && base != 10)
    out = std::string("0") +
          (type == 'b'   ? "b"
           : type == 'o' ? "o"
           : type == 'X' ? "X"
                         : "x") +
          out;
  return out;
}

std::string printf_text(double v, char type, int precision, bool alternate) {
  char format[16], buf[512];
  std::snprintf(format, sizeof format, "%%%s.%d%c", alternate ? "#" : "", precision, type);
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The digits of |v| (sign handled by the caller) under a spec of a float type or none.
std::string float_text(double v, const Spec& spec) {
  if (std::isnan(v)) return spec.type && std::isupper(spec.type) ? "NAN" : "nan";
  if (std::isinf(v)) return spec.type && std::isupper(spec.type) ? "INF" : "inf";
  switch (spec.type) {
    case 'e':
    case 'E':
    case 'f':
    case 'F':
      return printf_text(v, spec.type, spec.precision < 0 ? 6 : spec.precision, spec.alternate);
    case 'g':
    case 'G':
      return printf_text(v, spec.type, spec.precision < 0 ? 6 : std::max(spec.precision, 1),
                         spec.alternate);
    case '%':
      return printf_text(v * 100, 'f', spec.precision < 0 ? 6 : spec.precision, spec.alternate) +
             "%";
    default:
      break;
  }
  if (spec.precision < 0) return python_float_repr(v);
  // No type with a precision: 'g', with a digit after the point in fixed notation.
  std::string out = printf_text(v, 'g', std::max(spec.precision, 1), spec.alternate);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string padded(std::string sign, std::string body, const Spec& spec, bool number) {
  size_t len = sign.size() + body.size();
  if (spec.width <= 0 || size_t(spec.width) <= len) return sign + body;
  size_t pad = size_t(spec.width) - len;
  char align = spec.align ? spec.align : (number ? '>' : '<');
  std::string fill(pad, spec.fill);
  switch (align) {
    case '<':
      return sign + body + fill;
    case '^':
      return std::string(pad / 2, spec.fill) + sign + body + std::string(pad - pad / 2, spec.fill);
    case '=':
      return sign + fill + body;
    default:
      return fill + sign + body;
  }
}

std::string format_value(const Json& v, const std::string& spec_text, const std::string& name,
                         const std::string& where) {
  Spec spec = parse_spec(spec_text, where);
  bool integer = v.is_number_integer() || v.is_number_unsigned();
  std::string body;
  bool negative = false;
  if (integer && std::string("dxXob").find(spec.type ? spec.type : 'd') != std::string::npos) {
    check(spec.precision < 0, Status::invalid_argument, where, ": precision not allowed in the ",
          "integer format of {", name, "}");
    long long i = v.get<long long>();
    negative = i < 0;
    body = integer_text(i, spec.type, spec.alternate);
  } else {
    check(spec.type == 0 || std::string("dxXob").find(spec.type) == std::string::npos,
          Status::invalid_argument, where, ": unknown format code '", std::string(1, spec.type),
          "' for {", name, "}, a float");
    double d = v.get<double>();
    negative = std::signbit(d) && !std::isnan(d);
    body = float_text(std::fabs(d), spec);
  }
  std::string sign = negative ? "-" : spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
  return padded(sign, body, spec, true);
}

}  // namespace

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[40];
  int digits = 1;
  for (; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf: [-]d.ddde[+-]XX; its digits and decimal exponent, laid out as Python's repr does.
  std::string s = buf;
  bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t e = s.find('e');
  int exponent = std::atoi(s.c_str() + e + 1);
  std::string mantissa;
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.') mantissa += s[i];
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(size_t(-exponent - 1), '0') + mantissa;
    } else if (size_t(exponent) + 1 >= mantissa.size()) {
      out = mantissa + std::string(size_t(exponent) + 1 - mantissa.size(), '0') + ".0";
    } else {
      out = mantissa.substr(0, size_t(exponent) + 1) + "." + mantissa.substr(size_t(exponent) + 1);
    }
  } else {
    out = mantissa.substr(0, 1);
    if (mantissa.size() > 1) out += "." + mantissa.substr(1);
    char ex[16];
    std::snprintf(ex, sizeof ex, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += ex;
  }
  return negative ? "-" + out : out;
}

std::string format_path(const std::string& pattern, const Json& values, const std::string& where) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '}') {
      check(i + 1 < pattern.size() && pattern[i + 1] == '}', Status::invalid_argument, where,
            ": single '}' in filepath \"", pattern, "\"");
      out += '}', ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += '{', ++i;
      continue;
    }
    size_t close = pattern.find('}', i);
    check(close != std::string::npos, Status::invalid_argument, where,
          ": single '{' in filepath \"", pattern, "\"");
    std::string field = pattern.substr(i + 1, close - i - 1);
    size_t colon = field.find(':');
    std::string name = field.substr(0, colon);
    std::string spec = colon == std::string::npos ? "" : field.substr(colon + 1);
    check(values.contains(name) && values[name].is_number(), Status::invalid_argument, where,
          ": failed to format the filepath \"", pattern, "\": no value '", name, "'");
    out += format_value(values[name], spec, name, where);
    i = close;
  }
  return out;
}

}  // namespace kb::model
