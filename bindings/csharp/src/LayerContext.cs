using System;

namespace KBackend {
  /// <summary>A custom layer while its function runs (Model.RegisterLayer): where it asks for
  /// weights.</summary>
  public sealed class LayerContext {
    private IntPtr layer;

    internal LayerContext(IntPtr layer) { this.layer = layer; }

    /// <summary>The layer's weight name (a variable): made with the Keras initializer
    /// initializerJson ("\"zeros\"", {"class_name": "RandomNormal", "config": {...}}) the first
    /// time, the same variable after; saved and loaded in the order first asked for.</summary>
    public Tensor AddWeight(string name, long[] shape, string initializerJson = "\"zeros\"", bool trainable = true) {
      if (layer == IntPtr.Zero) throw new InvalidOperationException("AddWeight: the layer's function has returned");
      return K.layer_weight_raw((long)layer, name, shape, initializerJson, trainable ? 1 : 0);
    }

    internal void Close() { layer = IntPtr.Zero; }
  }
}
