package org.kbackend;

/** A custom layer while its LayerFunction runs: where it asks for weights. */
public final class LayerContext {
  private long layer;

  LayerContext(long layer) {
    this.layer = layer;
  }

  /** The layer's weight name (a variable): made with the Keras initializer initializerJson
   * ("\"zeros\"", {"class_name": "RandomNormal", "config": {...}}) the first time, the same
   * variable after; saved and loaded in the order first asked for.
   * @param name the weight's name
   * @param shape its shape
   * @param initializerJson a Keras initializer as JSON
   * @param trainable whether training changes it
   * @return the weight's variable */
  public Tensor addWeight(String name, long[] shape, String initializerJson, boolean trainable) {
    if (layer == 0) throw new IllegalStateException("addWeight: the layer's function has returned");
    return K.layer_weight_raw(layer, name, shape, initializerJson, trainable ? 1 : 0);
  }

  void close() {
    layer = 0;
  }
}
