namespace KBackend {
  using System.Collections.Generic;

  /// <summary>What Model.Fit returns with FitOptions: each logged value per epoch (Keras'
  /// History.history: "loss", the metrics, "val_loss"; NaN where a value was not a number), and
  /// the library's JSON of it.</summary>
  public sealed class History {
    internal History(string json) {
      Json = json;
      Values = Numbers(json);
    }

    /// <summary>Each logged value per epoch, by Keras' name.</summary>
    public IReadOnlyDictionary<string, double[]> Values { get; }

    /// <summary>The history as the library's JSON ({"loss": [...], ...}).</summary>
    public string Json { get; }

    /// <summary>One logged value per epoch ("loss", "val_acc").</summary>
    public double[] this[string name] { get { return Values[name]; } }

    /// <summary>Keras' logs of a batch or an epoch as values (what Fit's callback gets).</summary>
    internal static IReadOnlyDictionary<string, double> Logs(string json) {
      var out_ = new Dictionary<string, double>();
      foreach (var e in Numbers(json)) out_[e.Key] = e.Value.Length > 0 ? e.Value[0] : double.NaN;
      return out_;
    }

    /// <summary>The library's logs and history: one JSON object of numbers, nulls (NaN) or lists
    /// of them; anything else is a KBackendException (an internal error).</summary>
    internal static IReadOnlyDictionary<string, double[]> Numbers(string json) {
      return new Parser(json ?? "").Parse();
    }

    sealed class Parser {
      readonly string s;
      int at;

      internal Parser(string s) { this.s = s; }

      KBackendException Bad() {
        return new KBackendException((int)Status.ERROR_INTERNAL, "the library's logs are not numbers: " + s);
      }

      char Peek() {
        while (at < s.Length && char.IsWhiteSpace(s[at])) ++at;
        if (at >= s.Length) throw Bad();
        return s[at];
      }

      void Expect(char c) {
        if (Peek() != c) throw Bad();
        ++at;
      }

      string Key() {
        Expect('"');
        var out_ = new System.Text.StringBuilder();
        while (at < s.Length && s[at] != '"') {
          if (s[at] == '\\') ++at;
          if (at >= s.Length) throw Bad();
          out_.Append(s[at++]);
        }
        Expect('"');
        return out_.ToString();
      }

      double Number() {
        Peek();
        int start = at;
        while (at < s.Length && (char.IsLetterOrDigit(s[at]) || "+-.".IndexOf(s[at]) >= 0)) ++at;
        string word = s.Substring(start, at - start);
        if (word == "null") return double.NaN;
        double v;
        if (word.Length == 0 || !(char.IsDigit(word[0]) || word[0] == '-') ||
            !double.TryParse(word, System.Globalization.NumberStyles.Float,
                             System.Globalization.CultureInfo.InvariantCulture, out v))
          throw Bad();
        return v;
      }

      internal IReadOnlyDictionary<string, double[]> Parse() {
        var out_ = new Dictionary<string, double[]>();
        Expect('{');
        if (Peek() == '}') return out_;
        for (;;) {
          string name = Key();
          Expect(':');
          var list = new List<double>();
          if (Peek() == '[') {
            ++at;
            if (Peek() == ']') {
              ++at;
            } else {
              for (;;) {
                list.Add(Number());
                if (Peek() != ',') break;
                ++at;
              }
              Expect(']');
            }
          } else {
            list.Add(Number());
          }
          out_[name] = list.ToArray();
          if (Peek() == '}') return out_;
          Expect(',');
        }
      }
    }
  }
}
