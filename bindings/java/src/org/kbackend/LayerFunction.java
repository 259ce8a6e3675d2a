package org.kbackend;

import java.util.List;

/** Builds a custom layer's outputs from its inputs with kbackend's functions, as a Keras layer's
 * call does (Model.registerLayer). */
@FunctionalInterface
public interface LayerFunction {
  /** The layer's outputs.
   * @param layer the layer while this runs, for its weights
   * @param configJson the layer's config as JSON
   * @param inputs the layer's inputs
   * @return the layer's outputs */
  List<Tensor> build(LayerContext layer, String configJson, List<Tensor> inputs);
}
