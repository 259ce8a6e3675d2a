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
    internal delegate int BranchCallback(IntPtr userData, out IntPtr result);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate void PrintCallback(IntPtr text, IntPtr userData);

    /// <summary>The print sinks set so far: the library may call one while another replaces
    /// it.</summary>
    internal static readonly System.Collections.Generic.List<PrintCallback> PrintSinks =
        new System.Collections.Generic.List<PrintCallback>();

    /// <summary>The dtype of T's values.</summary>
    internal static DType DTypeOf<T>() {
      if (typeof(T) == typeof(float)) return DType.FLOAT32;
      if (typeof(T) == typeof(double)) return DType.FLOAT64;
      if (typeof(T) == typeof(int)) return DType.INT32;
      if (typeof(T) == typeof(long)) return DType.INT64;
      if (typeof(T) == typeof(short)) return DType.INT16;
      if (typeof(T) == typeof(sbyte)) return DType.INT8;
      if (typeof(T) == typeof(byte)) return DType.UINT8;
      if (typeof(T) == typeof(bool)) return DType.BOOL;
      throw new ArgumentException("kbackend: no dtype for " + typeof(T).FullName);
    }

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate int FoldCallback(IntPtr userData, IntPtr acc, IntPtr x, out IntPtr result);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate int StepCallback(IntPtr userData, IntPtr input, IntPtr states, UIntPtr n,
                                       out IntPtr output, out IntPtr newStates);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate int FitCallback(IntPtr userData, long epoch, long batch, IntPtr logsJson);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate int LayerCallback(IntPtr userData, IntPtr layer, IntPtr configJson, IntPtr inputs,
                                        UIntPtr numInputs, IntPtr outputs, UIntPtr capacity, out UIntPtr numOutputs);

    /// <summary>The registered layers' delegates: the library calls them for the process'
    /// life.</summary>
    internal static readonly System.Collections.Generic.List<LayerCallback> Layers =
        new System.Collections.Generic.List<LayerCallback>();

    [ThreadStatic] private static Exception pending;

    /// <summary>A NUL-terminated UTF-8 string of the library (null for NULL).</summary>
    internal static string Utf8(IntPtr text) {
      if (text == IntPtr.Zero) return null;
      int n = 0;
      while (Marshal.ReadByte(text, n) != 0) ++n;
      var bytes = new byte[n];
      Marshal.Copy(text, bytes, 0, n);
      return System.Text.Encoding.UTF8.GetString(bytes);
    }

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

    /// <summary>strings as {n, UTF-8 copies...} for C (null for null); FreeUtf8Strings releases
    /// the copies.</summary>
    internal static IntPtr[] Utf8Strings(string[] strings) {
      if (strings == null) return null;
      var r = new IntPtr[strings.Length + 1];
      r[0] = (IntPtr)strings.Length;
      try {
        for (int i = 0; i < strings.Length; ++i) {
          if (strings[i] == null) throw new ArgumentNullException("strings", "kbackend: string array entry " + i + " is null");
          if (strings[i].IndexOf('\0') >= 0) throw new ArgumentException("kbackend: string array entry " + i + " holds a NUL character");
          byte[] bytes = System.Text.Encoding.UTF8.GetBytes(strings[i]);
          r[i + 1] = Marshal.AllocHGlobal(bytes.Length + 1);
          Marshal.Copy(bytes, 0, r[i + 1], bytes.Length);
          Marshal.WriteByte(r[i + 1], bytes.Length, 0);
        }
      } catch {
        FreeUtf8Strings(r);
        throw;
      }
      return r;
    }

    internal static void FreeUtf8Strings(IntPtr[] strings) {
      if (strings == null) return;
      for (int i = 1; i < strings.Length; ++i)
        if (strings[i] != IntPtr.Zero) Marshal.FreeHGlobal(strings[i]);
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
