//! Finds libkbackend: `KBACKEND_LIB_DIR` (a folder with libkbackend.so, such as a CMake build
//! folder), else `pkg-config kbackend`. The declarations themselves are in src/raw.rs, generated
//! with every other binding from the header by api/generate.py, so this crate needs no header.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=KBACKEND_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let lib_dir = env::var_os("KBACKEND_LIB_DIR").map(PathBuf::from).or_else(pkg_config_libdir);
    let Some(lib_dir) = lib_dir else {
        panic!(
            "kbackend-sys: libkbackend not found: set KBACKEND_LIB_DIR to the folder holding \
             libkbackend.so (e.g. the CMake build folder), or install kbackend so that \
             `pkg-config kbackend` finds it"
        )
    };
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=kbackend");
    // This crate's own tests run without LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", lib_dir.display());
    // Dependents (the kbackend crate) read this as DEP_KBACKEND_LIB_DIR and put the folder in the
    // rpath of their tests and examples.
    println!("cargo:lib_dir={}", lib_dir.display());
}

fn pkg_config_libdir() -> Option<PathBuf> {
    let out =
        Command::new("pkg-config").args(["--variable", "libdir", "kbackend"]).output().ok()?;
    let dir = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !dir.is_empty()).then(|| dir.into())
}
