package org.kbackend;

/** What the C trampoline of a custom layer calls: the layer's handle, its config and borrowed
 * input pointers in, new references out. Model.registerLayer adapts a LayerFunction to it. */
@FunctionalInterface
interface NativeLayer {
  long[] build(long layer, String configJson, long[] inputs);
}
