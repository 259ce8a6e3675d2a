package org.kbackend;

/** A failed kbackend call: the library's message (it names the function and the problem) and
 * its kb_status code. Unchecked, as every function of the API can fail. */
public class KBackendException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  /** The kb_status code (serialized with the exception). */
  private final int code;

  /** An exception of a kb_status code and the library's message.
   * @param code the kb_status code
   * @param message the message */
  public KBackendException(int code, String message) {
    super(message);
    this.code = code;
  }

  /** The kb_status code (1 = invalid argument, 2 = shape, 3 = dtype, ...).
   * @return the code */
  public int code() {
    return code;
  }

  /** The status as the enum.
   * @return the status */
  public Status status() {
    return Status.swigToEnum(code);
  }
}
