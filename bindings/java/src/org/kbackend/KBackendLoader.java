package org.kbackend;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Cleaner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/** Loads the JNI library libkbackend_java.so: from the system property kbackend.library.path
 * (a file or a folder); else from the jar itself, whose native/PLATFORM/ folder (written by
 * bindings/java/build_jar.sh) is copied into a temporary folder first, as the libraries find
 * each other by their run path $ORIGIN; else from the folder of the jar; else through
 * java.library.path. Checks the C ABI version once loaded. */
final class KBackendLoader {
  /** The one Cleaner that releases native references of unreachable handles. */
  static final Cleaner CLEANER = Cleaner.create();

  static final int ABI_VERSION = 1;
  /** The jar's folder of native libraries for this machine, and the list of its files. */
  static final String NATIVE = "/org/kbackend/native/" + platform() + "/";
  static final String NATIVE_LIST = NATIVE + "files.txt";
  private static boolean loaded;

  private KBackendLoader() {}

  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase().startsWith("linux") ? "linux"
                                                                                     : "other";
    String arch = System.getProperty("os.arch", "");
    return os + "-" + (arch.equals("amd64") ? "x86_64" : arch);
  }

  static synchronized void load() {
    if (loaded) return;
    String name = System.mapLibraryName("kbackend_java");
    File candidate = null;
    String configured = System.getProperty("kbackend.library.path");
    if (configured != null) {
      File f = new File(configured);
      candidate = f.isDirectory() ? new File(f, name) : f;
    } else {
      candidate = extracted(name);
      if (candidate == null) candidate = nextToJar(name);
    }
    if (candidate != null) System.load(candidate.getAbsolutePath());
    else System.loadLibrary("kbackend_java");
    int abi = KJNI.abi_version();
    if (abi != ABI_VERSION)
      throw new UnsatisfiedLinkError("kbackend: the library has ABI " + abi + ", this binding "
                                     + ABI_VERSION);
    loaded = true;
  }

  /** The JNI library copied with its neighbours out of the jar, or null when the jar has none. */
  private static File extracted(String name) {
    List<String> files = new ArrayList<>();
    try (InputStream list = KBackendLoader.class.getResourceAsStream(NATIVE_LIST)) {
      if (list == null) return null;
      for (String line : new String(list.readAllBytes(), "UTF-8").split("\n"))
        if (!line.isBlank()) files.add(line.strip());
    } catch (IOException e) {
      throw linkError("cannot read " + NATIVE_LIST + " in the jar", e);
    }
    try {
      Path dir = Files.createTempDirectory("kbackend-");
      dir.toFile().deleteOnExit();
      for (String file : files) {
        Path target = dir.resolve(file);
        try (InputStream in = KBackendLoader.class.getResourceAsStream(NATIVE + file)) {
          if (in == null) throw new IOException(NATIVE + file + " is listed but missing");
          Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        target.toFile().deleteOnExit();
      }
      return dir.resolve(name).toFile();
    } catch (IOException e) {
      throw linkError("cannot copy the native libraries out of the jar", e);
    }
  }

  private static File nextToJar(String name) {
    try {
      File jar =
          new File(KBackendLoader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      File next = new File(jar.isDirectory() ? jar : jar.getParentFile(), name);
      return next.isFile() ? next : null;
    } catch (Exception e) {
      return null; // no code source: fall back to java.library.path
    }
  }

  private static UnsatisfiedLinkError linkError(String message, Exception cause) {
    UnsatisfiedLinkError e = new UnsatisfiedLinkError("kbackend: " + message + ": " + cause);
    e.initCause(cause);
    return e;
  }
}
