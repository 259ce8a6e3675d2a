package org.kbackend;

import java.io.File;
import java.lang.ref.Cleaner;

/** Loads the JNI library libkbackend_java.so: from the system property kbackend.library.path
 * (a file or a folder), else from the folder of the jar (the jar ships with the library next to
 * it), else through java.library.path. Checks the C ABI version once loaded. */
final class KBackendLoader {
  /** The one Cleaner that releases native references of unreachable handles. */
  static final Cleaner CLEANER = Cleaner.create();

  static final int ABI_VERSION = 1;
  private static boolean loaded;

  private KBackendLoader() {}

  static synchronized void load() {
    if (loaded) return;
    String name = System.mapLibraryName("kbackend_java");
    File candidate = null;
    String configured = System.getProperty("kbackend.library.path");
    if (configured != null) {
      File f = new File(configured);
      candidate = f.isDirectory() ? new File(f, name) : f;
    } else {
      try {
        File jar = new File(KBackendLoader.class.getProtectionDomain().getCodeSource()
                                .getLocation().toURI());
        File next = new File(jar.isDirectory() ? jar : jar.getParentFile(), name);
        if (next.isFile()) candidate = next;
      } catch (Exception e) {
        candidate = null; // no code source: fall back to java.library.path
      }
    }
    if (candidate != null) System.load(candidate.getAbsolutePath());
    else System.loadLibrary("kbackend_java");
    int abi = KJNI.abi_version();
    if (abi != ABI_VERSION)
      throw new UnsatisfiedLinkError("kbackend: the library has ABI " + abi + ", this binding "
                                     + ABI_VERSION);
    loaded = true;
  }
}
