package org.kbackend;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** What Model.fit returns: each logged value per epoch (Keras' History.history: "loss", the
 * metrics, "val_loss"; NaN where a value was not a number), and the library's JSON of it. */
public final class History {
  private final Map<String, double[]> values;
  private final String json;

  History(String json) {
    this.json = json;
    this.values = Collections.unmodifiableMap(numbers(json));
  }

  /** Each logged value per epoch, by Keras' name.
   * @return the values ("loss": one per epoch, ...) */
  public Map<String, double[]> values() {
    return values;
  }

  /** One logged value per epoch.
   * @param name Keras' name ("loss", "val_acc")
   * @return its values, or null when fit did not log it */
  public double[] get(String name) {
    return values.get(name);
  }

  /** The history as the library's JSON.
   * @return {"loss": [...], ...} */
  public String json() {
    return json;
  }

  /** Keras' logs of a batch or an epoch as values (what LogsCallback gets). */
  static Map<String, Double> logs(String json) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (Map.Entry<String, double[]> e : numbers(json).entrySet())
      out.put(e.getKey(), e.getValue().length > 0 ? e.getValue()[0] : Double.NaN);
    return Collections.unmodifiableMap(out);
  }

  /** The library's logs and history: one JSON object of numbers, nulls (NaN) or lists of them;
   * anything else is a KBackendException (an internal error). */
  static Map<String, double[]> numbers(String json) {
    return new Numbers(json).parse();
  }

  private static final class Numbers {
    private final String s;
    private int at;

    Numbers(String s) {
      this.s = s == null ? "" : s;
    }

    private KBackendException bad() {
      return new KBackendException(Status.ERROR_INTERNAL.swigValue(),
          "the library's logs are not numbers: " + s);
    }

    private char peek() {
      while (at < s.length() && Character.isWhitespace(s.charAt(at))) ++at;
      if (at >= s.length()) throw bad();
      return s.charAt(at);
    }

    private void expect(char c) {
      if (peek() != c) throw bad();
      ++at;
    }

    private String key() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (at < s.length() && s.charAt(at) != '"') {
        if (s.charAt(at) == '\\') ++at;
        if (at >= s.length()) throw bad();
        out.append(s.charAt(at++));
      }
      expect('"');
      return out.toString();
    }

    private double number() {
      peek();
      int start = at;
      while (at < s.length() && (Character.isLetterOrDigit(s.charAt(at)) || "+-.".indexOf(s.charAt(at)) >= 0)) ++at;
      String word = s.substring(start, at);
      if (word.equals("null")) return Double.NaN;
      if (word.isEmpty() || !(Character.isDigit(word.charAt(0)) || word.charAt(0) == '-')) throw bad();
      try {
        return Double.parseDouble(word);
      } catch (NumberFormatException e) {
        throw bad();
      }
    }

    Map<String, double[]> parse() {
      Map<String, double[]> out = new LinkedHashMap<>();
      expect('{');
      if (peek() == '}') return out;
      for (;;) {
        String name = key();
        expect(':');
        java.util.List<Double> list = new java.util.ArrayList<>();
        if (peek() == '[') {
          ++at;
          if (peek() == ']') {
            ++at;
          } else {
            for (;;) {
              list.add(number());
              if (peek() != ',') break;
              ++at;
            }
            expect(']');
          }
        } else {
          list.add(number());
        }
        double[] v = new double[list.size()];
        for (int i = 0; i < v.length; ++i) v[i] = list.get(i);
        out.put(name, v);
        if (peek() == '}') return out;
        expect(',');
      }
    }
  }
}
