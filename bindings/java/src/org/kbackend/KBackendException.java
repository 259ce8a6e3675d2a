package org.kbackend;

/** A failed kbackend call: the library's message (it names the function and the problem) and
 * its kb_status code. Unchecked, as every function of the API can fail. */
public class KBackendException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int code;

  public KBackendException(int code, String message) {
    super(message);
    this.code = code;
  }

  /** The kb_status code (1 = invalid argument, 2 = shape, 3 = dtype, ...). */
  public int code() {
    return code;
  }

  /** The status as the enum. */
  public Status status() {
    return Status.swigToEnum(code);
  }
}
