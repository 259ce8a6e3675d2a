package org.kbackend;

/** One device this process can run on (K.list_devices()). */
public final class DeviceInfo {
  /** CPU or CUDA. */
  public final DeviceKind kind;
  /** The N of cuda:N (0 for the CPU). */
  public final long index;
  /** The product name. */
  public final String name;
  /** Memory in bytes (the machine's for the CPU). */
  public final long memory;

  DeviceInfo(DeviceKind kind, long index, String name, long memory) {
    this.kind = kind;
    this.index = index;
    this.name = name;
    this.memory = memory;
  }

  @Override
  public String toString() {
    return (kind == DeviceKind.CPU ? "cpu" : "cuda:" + index) + " (" + name + ", " + memory + " bytes)";
  }
}
