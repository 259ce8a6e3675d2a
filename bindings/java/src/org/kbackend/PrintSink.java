package org.kbackend;

/** Where print_tensor writes (K.set_print_sink): called from whichever thread runs the function
 * that prints; what it throws is dropped (print_tensor has no status to report it by). */
@FunctionalInterface
public interface PrintSink {
  /** Receives one printed text.
   * @param text what print_tensor wrote */
  void print(String text);
}
