//! Raw declarations of the kbackend C ABI (`include/kbackend.h`).
//!
//! Every declaration of the header: the status, dtype and option constants, the opaque handle
//! types, the callback types and the `extern "C"` functions, generated into src/raw.rs by the
//! repository's api/generate.py (CI checks that it is current). Everything here is `unsafe` to
//! call and follows the header's conventions (new references are released by the caller, errors
//! are read with [`kb_last_error_message`]). The safe layer is the `kbackend` crate.
//!
//! The library is found through `KBACKEND_LIB_DIR` (a folder holding libkbackend.so, for
//! example a CMake build folder), or else through `pkg-config kbackend`.
#![allow(non_camel_case_types, non_upper_case_globals, clippy::upper_case_acronyms)]

#[rustfmt::skip]
mod raw;
pub use raw::*;
