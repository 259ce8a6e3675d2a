//! The generated declarations link and follow the header's conventions.
use kbackend_sys::*;
use std::ffi::{CStr, CString};
use std::ptr;

#[test]
fn version_and_constants() {
    unsafe {
        assert_eq!(kb_abi_version(), KB_ABI_VERSION);
        assert!(!CStr::from_ptr(kb_version()).to_bytes().is_empty());
        assert_eq!(CStr::from_ptr(kb_dtype_name(KB_FLOAT32)).to_str().unwrap(), "float32");
        let name = CString::new("int64").unwrap();
        let mut dtype: kb_data_type = -5;
        assert_eq!(kb_parse_dtype(name.as_ptr(), &mut dtype), KB_OK);
        assert_eq!(dtype, KB_INT64);
    }
}

#[test]
fn a_failure_sets_the_message_and_leaves_the_output_untouched() {
    unsafe {
        let data = [1.0f32, 2.0, 3.0];
        let shape = [3i64];
        let mut t: *mut kb_tensor = ptr::null_mut();
        assert_eq!(
            kb_tensor_from_data(data.as_ptr().cast(), KB_FLOAT32, shape.as_ptr(), 1, &mut t),
            KB_OK
        );
        let bad = [2i64, 2];
        let mut out: *mut kb_tensor = ptr::null_mut();
        assert_eq!(kb_reshape(t, bad.as_ptr(), 2, &mut out), KB_ERROR_SHAPE);
        assert!(out.is_null());
        assert_eq!(kb_last_error_code(), KB_ERROR_SHAPE);
        let msg = CStr::from_ptr(kb_last_error_message()).to_str().unwrap();
        assert!(msg.starts_with("reshape:"), "{msg}");
        let mut n = 0usize;
        assert_eq!(kb_tensor_nbytes(t, &mut n), KB_OK);
        assert_eq!(n, 12);
        kb_tensor_release(t);
        kb_tensor_release(ptr::null_mut()); // NULL-safe
    }
}
