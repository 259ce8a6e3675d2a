//! DLPack (include/kbackend.h): a tensor's value lent to another library without a copy, and
//! another library's memory taken as a constant, as the managed tensors a C API passes.
use std::ffi::c_void;
use std::ptr;

use crate::backend::DlpackCopy;
use crate::{check, new_tensor, sys, Result, Tensor};

/// A DLPack managed tensor this program owns: DLPack 1.x's `DLManagedTensorVersioned`, or the
/// older `DLManagedTensor`. Dropping it runs its deleter, unless [`DLPack::into_raw`] handed it
/// to another library or [`Tensor::from_dlpack`] to kbackend first.
#[derive(Debug)]
pub struct DLPack {
    ptr: *mut c_void,
    versioned: bool,
}

// The managed tensor's deleter may run on any thread (include/kbackend.h).
unsafe impl Send for DLPack {}

impl DLPack {
    /// Which struct [`DLPack::as_ptr`] points to: `DLManagedTensorVersioned` or `DLManagedTensor`.
    pub fn versioned(&self) -> bool {
        self.versioned
    }

    /// The managed tensor, borrowed (NULL once taken).
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// Gives the managed tensor up: whoever receives it calls its deleter.
    pub fn into_raw(mut self) -> *mut c_void {
        std::mem::replace(&mut self.ptr, ptr::null_mut())
    }

    /// Takes over a managed tensor another library's C API gave.
    ///
    /// # Safety
    /// `p` must be NULL or a `DLManagedTensorVersioned*` (versioned) or `DLManagedTensor*` that
    /// the caller owns.
    pub unsafe fn from_raw(p: *mut c_void, versioned: bool) -> DLPack {
        DLPack { ptr: p, versioned }
    }
}

impl Drop for DLPack {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        unsafe {
            if self.versioned {
                sys::kb_dlpack_release(self.ptr.cast());
            } else {
                sys::kb_dlpack_release_unversioned(self.ptr.cast());
            }
        }
    }
}

impl Tensor {
    /// The value lent as a DLPack 1.x managed tensor (a constant's read-only, a variable's memory
    /// the variable's), copied only for [`DlpackCopy::Always`].
    pub fn to_dlpack(&self, copy: DlpackCopy) -> Result<DLPack> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::kb_tensor_to_dlpack(self.as_ptr(), copy.code(), &mut out) })?;
        Ok(DLPack { ptr: out.cast(), versioned: true })
    }

    /// [`Tensor::to_dlpack`] as DLPack's unversioned struct, for older consumers.
    pub fn to_dlpack_unversioned(&self, copy: DlpackCopy) -> Result<DLPack> {
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::kb_tensor_to_dlpack_unversioned(self.as_ptr(), copy.code(), &mut out)
        })?;
        Ok(DLPack { ptr: out.cast(), versioned: false })
    }

    /// A constant over the managed tensor's memory, without a copy unless `copy` asks for one or
    /// allows one it needs (strides other than row-major, misaligned data). On success kbackend
    /// takes it (`managed` is emptied); on failure it stays `managed`'s.
    pub fn from_dlpack(managed: &mut DLPack, copy: DlpackCopy) -> Result<Tensor> {
        let (p, versioned) = (managed.ptr, managed.versioned);
        let t = new_tensor(|out| unsafe {
            if versioned {
                sys::kb_tensor_from_dlpack(p.cast(), copy.code(), out)
            } else {
                sys::kb_tensor_from_dlpack_unversioned(p.cast(), copy.code(), out)
            }
        })?;
        managed.ptr = ptr::null_mut();
        Ok(t)
    }
}
