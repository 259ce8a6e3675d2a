//! Puts the folder of libkbackend (found by kbackend-sys) in the rpath of this crate's tests and
//! examples, so that they run without LD_LIBRARY_PATH.
fn main() {
    if let Ok(dir) = std::env::var("DEP_KBACKEND_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
