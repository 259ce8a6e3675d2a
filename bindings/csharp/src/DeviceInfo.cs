namespace KBackend {
  /// <summary>One device this process can run on (K.list_devices()).</summary>
  public sealed class DeviceInfo {
    /// <summary>CPU or CUDA.</summary>
    public DeviceKind Kind { get; }
    /// <summary>The N of cuda:N (0 for the CPU).</summary>
    public long Index { get; }
    /// <summary>The product name.</summary>
    public string Name { get; }
    /// <summary>Memory in bytes (the machine's for the CPU).</summary>
    public long Memory { get; }

    internal DeviceInfo(DeviceKind kind, long index, string name, long memory) {
      Kind = kind;
      Index = index;
      Name = name;
      Memory = memory;
    }

    /// <summary>"cpu" or "cuda:N", with the name and memory.</summary>
    public override string ToString() {
      return (Kind == DeviceKind.CPU ? "cpu" : "cuda:" + Index) + " (" + Name + ", " + Memory + " bytes)";
    }
  }
}
