namespace KBackend {
  /// <summary>A failed kbackend call: the library's message (it names the function and the
  /// problem) and its kb_status code.</summary>
  public class KBackendException : System.Exception {
    public KBackendException(int code, string message) : base(message) {
      Code = code;
    }

    /// <summary>The kb_status code (1 = invalid argument, 2 = shape, 3 = dtype, ...).</summary>
    public int Code { get; }

    public Status Status {
      get { return (Status)Code; }
    }
  }
}
