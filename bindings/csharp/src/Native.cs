using System;
using System.Runtime.InteropServices;

namespace KBackend {
  /// <summary>A pinned buffer as C sees it: (void* data, uint64_t nbytes).</summary>
  [StructLayout(LayoutKind.Sequential)]
  internal struct NativeBuffer {
    public IntPtr Data;
    public ulong Bytes;

    public NativeBuffer(IntPtr data, ulong bytes) {
      Data = data;
      Bytes = bytes;
    }
  }

  /// <summary>What the SWIG layer needs from C#: arrays with their length in front, the callback
  /// delegates (the C signatures), and the exception a callback threw, kept for this thread until
  /// the building call fails with it.</summary>
  internal static class Native {
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate int MapCallback(IntPtr userData, IntPtr x, out IntPtr result);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate int FoldCallback(IntPtr userData, IntPtr acc, IntPtr x, out IntPtr result);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate int StepCallback(IntPtr userData, IntPtr input, IntPtr states, UIntPtr n,
                                       out IntPtr output, out IntPtr newStates);

    [ThreadStatic] private static Exception pending;

    internal static long[] Prefixed(long[] values) {
      if (values == null) return null;
      var r = new long[values.Length + 1];
      r[0] = values.Length;
      Array.Copy(values, 0, r, 1, values.Length);
      return r;
    }

    internal static IntPtr[] Handles(Tensor[] tensors) {
      if (tensors == null) return null;
      var r = new IntPtr[tensors.Length + 1];
      r[0] = (IntPtr)tensors.Length;
      for (int i = 0; i < tensors.Length; ++i) {
        if (tensors[i] == null) throw new ArgumentNullException("tensors", "kbackend: tensor array entry " + i + " is null");
        r[i + 1] = Tensor.getCPtr(tensors[i]).Handle;
      }
      return r;
    }

    /// <summary>A new reference for the library (a callback's result).</summary>
    internal static IntPtr Result(Tensor t, string who) {
      if (t == null) throw new ArgumentNullException("result", who + ": the callback returned null");
      return (IntPtr)K.retained(t);
    }

    /// <summary>Keeps e for this thread and reports the failure to the library.</summary>
    internal static int Keep(Exception e, string who) {
      pending = e;
      return K.set_callback_error(who + ": the C# callback threw " + e.GetType().FullName + ": " + e.Message);
    }

    internal static Exception TakePending() {
      var e = pending;
      pending = null;
      return e;
    }
  }
}
