//! kbackend for Rust: the Keras 2.2 backend API over the native kbackend library.
//!
//! ```no_run
//! use kbackend::{self as kb, DType, Function, Tensor};
//! # fn main() -> kb::Result<()> {
//! let x = kb::placeholder(&[-1, 3], DType::F32, Some("x"))?;
//! let w = kb::variable(&[0.5f32, -1.0, 2.0], &[3, 1], Some("w"))?;
//! let y = (&x.dot(&w)? * 2.0 + 1.0).sigmoid()?;
//! let f = Function::new(&[&x], &[&y], &[])?;
//! let out = f.call(&[&Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[1, 3])?])?;
//! println!("{:?}", out[0].to_vec::<f32>()?);
//! # Ok(()) }
//! ```
//!
//! A [`Tensor`] owns one reference to a native graph value: `Drop` releases it and `Clone`
//! retains it; tensors and functions are `Send + Sync` (the library's reference counts are atomic
//! and its graph building is thread-safe). Every fallible call returns [`Result`] with the
//! library's status and message; the `std::ops` operators panic with that message instead (use
//! the named methods to handle the error). Closures for [`map_fn`], [`foldl`], [`foldr`] and
//! [`rnn`] go through a C trampoline that catches panics: a failing closure comes back as the
//! building function's `Err`.
#![deny(missing_docs)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

pub use kbackend_sys as sys;

#[rustfmt::skip]
pub mod backend;
pub mod dlpack;
pub mod models;
#[rustfmt::skip]
pub mod options;
/// Keras' callbacks for fit (`FitOptions::callbacks`): `kbackend::callbacks::EarlyStopping`.
pub use options::callbacks;
#[rustfmt::skip]
mod errors;

// ---- errors -------------------------------------------------------------------------------

/// The kind of a failure (`kb_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// An argument the function does not accept (`KB_ERROR_INVALID_ARGUMENT`).
    InvalidArgument,
    /// Shapes that do not fit the function (`KB_ERROR_SHAPE`).
    Shape,
    /// A dtype the function does not take (`KB_ERROR_DTYPE`).
    DType,
    /// A case the library does not implement (`KB_ERROR_NOT_IMPLEMENTED`).
    NotImplemented,
    /// An allocation failed (`KB_ERROR_OUT_OF_MEMORY`).
    OutOfMemory,
    /// A device (the GPU) failed or is missing (`KB_ERROR_DEVICE`).
    Device,
    /// A failure inside the library (`KB_ERROR_INTERNAL`).
    Internal,
    /// A part the call needs is missing (the MPI plugin or library).
    Unavailable,
    /// A collective did not complete (its deadline, processes that differ, a failure).
    Distributed,
    /// A file the call reads does not exist (`KB_ERROR_NOT_FOUND`; `std::io::ErrorKind::NotFound`
    /// through `std::io::Error::from`).
    NotFound,
    /// A file cannot be read or written (`KB_ERROR_IO`).
    Io,
    /// A code this crate does not know (a newer library).
    Other(i32),
}

impl Status {
    fn from_code(code: sys::kb_status) -> Status {
        match code {
            sys::KB_ERROR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::KB_ERROR_SHAPE => Status::Shape,
            sys::KB_ERROR_DTYPE => Status::DType,
            sys::KB_ERROR_NOT_IMPLEMENTED => Status::NotImplemented,
            sys::KB_ERROR_OUT_OF_MEMORY => Status::OutOfMemory,
            sys::KB_ERROR_DEVICE => Status::Device,
            sys::KB_ERROR_INTERNAL => Status::Internal,
            sys::KB_ERROR_UNAVAILABLE => Status::Unavailable,
            sys::KB_ERROR_DISTRIBUTED => Status::Distributed,
            sys::KB_ERROR_NOT_FOUND => Status::NotFound,
            sys::KB_ERROR_IO => Status::Io,
            other => Status::Other(other),
        }
    }

    /// The C status code.
    pub fn code(self) -> sys::kb_status {
        match self {
            Status::InvalidArgument => sys::KB_ERROR_INVALID_ARGUMENT,
            Status::Shape => sys::KB_ERROR_SHAPE,
            Status::DType => sys::KB_ERROR_DTYPE,
            Status::NotImplemented => sys::KB_ERROR_NOT_IMPLEMENTED,
            Status::OutOfMemory => sys::KB_ERROR_OUT_OF_MEMORY,
            Status::Device => sys::KB_ERROR_DEVICE,
            Status::Internal => sys::KB_ERROR_INTERNAL,
            Status::Unavailable => sys::KB_ERROR_UNAVAILABLE,
            Status::Distributed => sys::KB_ERROR_DISTRIBUTED,
            Status::NotFound => sys::KB_ERROR_NOT_FOUND,
            Status::Io => sys::KB_ERROR_IO,
            Status::Other(c) => c,
        }
    }
}

/// A failed call: the status and the library's message (which names the function).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The kind of failure.
    pub status: Status,
    /// The library's message (`kb_last_error_message`), or this crate's.
    pub message: String,
}

impl Error {
    /// An error of `status` with `message` (a closure returns one to fail its building function).
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A failure as an I/O error: a missing file is `ErrorKind::NotFound`, as `std::fs` gives it
/// (the kinds come from `[errors]` in api/kbackend.toml); other failures are `ErrorKind::Other`.
impl From<Error> for std::io::Error {
    fn from(e: Error) -> std::io::Error {
        let kind = errors::io_kind(e.status).unwrap_or(std::io::ErrorKind::Other);
        std::io::Error::new(kind, e)
    }
}

/// The result of a fallible call: the value or the library's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

fn check(code: sys::kb_status) -> Result<()> {
    if code == sys::KB_OK {
        return Ok(());
    }
    // SAFETY: the message is library-owned, thread-local and valid until the next call.
    let message = unsafe { CStr::from_ptr(sys::kb_last_error_message()) };
    Err(Error::new(Status::from_code(code), message.to_string_lossy()))
}

fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Status::InvalidArgument, "a string contains NUL"))
}

fn opt_cstring(s: Option<&str>) -> Result<Option<CString>> {
    s.map(cstring).transpose()
}

fn opt_ptr(s: &Option<CString>) -> *const std::ffi::c_char {
    s.as_ref().map_or(ptr::null(), |c| c.as_ptr())
}

// ---- dtypes and options ---------------------------------------------------------------------

/// An element type (`kb_data_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// `float16` (IEEE half precision).
    F16,
    /// `float32`.
    F32,
    /// `float64`.
    F64,
    /// `int8`.
    I8,
    /// `int16`.
    I16,
    /// `int32`.
    I32,
    /// `int64`.
    I64,
    /// `uint8`.
    U8,
    /// `bool`.
    Bool,
    /// `bfloat16`: stored in 16 bits, computed in float32.
    BF16,
}

impl DType {
    /// The C dtype code (`kb_data_type`).
    pub fn code(self) -> sys::kb_data_type {
        match self {
            DType::F16 => sys::KB_FLOAT16,
            DType::F32 => sys::KB_FLOAT32,
            DType::F64 => sys::KB_FLOAT64,
            DType::I8 => sys::KB_INT8,
            DType::I16 => sys::KB_INT16,
            DType::I32 => sys::KB_INT32,
            DType::I64 => sys::KB_INT64,
            DType::U8 => sys::KB_UINT8,
            DType::Bool => sys::KB_BOOL,
            DType::BF16 => sys::KB_BFLOAT16,
        }
    }

    /// The dtype of a C code; None for a code this crate does not know (or `KB_DTYPE_DEFAULT`).
    pub fn from_code(code: sys::kb_data_type) -> Option<DType> {
        [
            DType::F16,
            DType::F32,
            DType::F64,
            DType::I8,
            DType::I16,
            DType::I32,
            DType::I64,
            DType::U8,
            DType::Bool,
            DType::BF16,
        ]
        .into_iter()
        .find(|d| d.code() == code)
    }

    /// Keras' name ("float32", ...).
    pub fn name(self) -> &'static str {
        // SAFETY: kb_dtype_name returns a static string for every valid dtype.
        unsafe { CStr::from_ptr(sys::kb_dtype_name(self.code())) }.to_str().unwrap_or("?")
    }
}

impl std::str::FromStr for DType {
    type Err = Error;
    fn from_str(s: &str) -> Result<DType> {
        let c = cstring(s)?;
        let mut code = 0;
        check(unsafe { sys::kb_parse_dtype(c.as_ptr(), &mut code) })?;
        DType::from_code(code).ok_or_else(|| Error::new(Status::DType, "unknown dtype"))
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust element type with a kbackend dtype.
pub trait Element: Copy + Default + 'static {
    /// The dtype of tensors holding this type.
    const DTYPE: DType;
}
macro_rules! element {
    ($($t:ty => $d:ident),*) => { $(impl Element for $t { const DTYPE: DType = DType::$d; })* };
}
element!(f32 => F32, f64 => F64, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8,
         bool => Bool);

/// Keras' data_format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataFormat {
    /// The global image_data_format().
    Default,
    /// `channels_last`: (batch, spatial..., channels).
    ChannelsLast,
    /// `channels_first`: (batch, channels, spatial...).
    ChannelsFirst,
}

impl DataFormat {
    fn code(self) -> sys::kb_data_format {
        match self {
            DataFormat::Default => image_data_format().map_or(sys::KB_CHANNELS_LAST, |f| f.code()),
            DataFormat::ChannelsLast => sys::KB_CHANNELS_LAST,
            DataFormat::ChannelsFirst => sys::KB_CHANNELS_FIRST,
        }
    }
}

/// Keras' padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    /// `valid`: no padding, windows inside the input only.
    Valid,
    /// `same`: zero padding so that the output has ceil(input / stride) positions.
    Same,
    /// `causal`: zero padding at the start only (conv1d with channels_last only).
    Causal,
}

impl Padding {
    fn code(self) -> sys::kb_padding {
        match self {
            Padding::Valid => sys::KB_PADDING_VALID,
            Padding::Same => sys::KB_PADDING_SAME,
            Padding::Causal => sys::KB_PADDING_CAUSAL,
        }
    }
}

/// Keras' pool_mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolMode {
    /// `max`: the largest value of each window.
    Max,
    /// `avg`: the mean of each window's real (unpadded) cells.
    Avg,
}

impl PoolMode {
    fn code(self) -> sys::kb_pool_mode {
        match self {
            PoolMode::Max => sys::KB_POOL_MAX,
            PoolMode::Avg => sys::KB_POOL_AVG,
        }
    }
}

/// Where a compiled function runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// The CPU (`KB_DEVICE_CPU`), always there.
    Cpu,
    /// An NVIDIA GPU (`KB_DEVICE_CUDA`), through libkbackend_cuda.so.
    Cuda,
}

impl Device {
    fn code(self) -> sys::kb_device_kind {
        match self {
            Device::Cpu => sys::KB_DEVICE_CPU,
            Device::Cuda => sys::KB_DEVICE_CUDA,
        }
    }
}

// ---- tensors --------------------------------------------------------------------------------

/// One reference to a kbackend graph value (placeholder, variable, constant or op result).
pub struct Tensor {
    ptr: NonNull<sys::kb_tensor>,
}

// SAFETY: the library's reference counts are atomic, release may run on any thread, and graph
// building is thread-safe (kbackend.h); a Tensor is never mutated through &self.
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

impl Drop for Tensor {
    fn drop(&mut self) {
        unsafe { sys::kb_tensor_release(self.ptr.as_ptr()) }
    }
}

impl Clone for Tensor {
    fn clone(&self) -> Tensor {
        unsafe { sys::kb_tensor_retain(self.ptr.as_ptr()) };
        Tensor { ptr: self.ptr }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor({:?}, shape {:?}, {:?})",
            self.name().unwrap_or_default(),
            self.int_shape().ok().flatten(),
            self.dtype().ok()
        )
    }
}

/// Calls `f(&mut out)` and wraps the new reference it returns.
fn new_tensor(f: impl FnOnce(*mut *mut sys::kb_tensor) -> sys::kb_status) -> Result<Tensor> {
    let mut out = ptr::null_mut();
    check(f(&mut out))?;
    // SAFETY: on success the library wrote a new reference.
    unsafe { Tensor::from_raw(out) }
        .ok_or_else(|| Error::new(Status::Internal, "the library returned no tensor"))
}

fn handles(ts: &[&Tensor]) -> Vec<*mut sys::kb_tensor> {
    ts.iter().map(|t| t.as_ptr()).collect()
}

fn array_ptr<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        ptr::NonNull::dangling().as_ptr()
    } else {
        v.as_ptr()
    }
}

/// Takes the items of a kb_tensor_list (and releases the list).
unsafe fn take_list(list: *mut sys::kb_tensor_list) -> Result<Vec<Tensor>> {
    let n = sys::kb_tensor_list_size(list);
    let mut out = Vec::with_capacity(n);
    let mut status = Ok(());
    for i in 0..n {
        match new_tensor(|o| sys::kb_tensor_list_get(list, i, o)) {
            Ok(t) => out.push(t),
            Err(e) => {
                status = Err(e);
                break;
            }
        }
    }
    sys::kb_tensor_list_release(list);
    status.map(|_| out)
}

fn shape_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&d| d as i64).collect()
}

impl Tensor {
    /// Takes over a reference (None for NULL).
    ///
    /// # Safety
    /// `p` must be NULL or a kb_tensor reference that the caller owns.
    pub unsafe fn from_raw(p: *mut sys::kb_tensor) -> Option<Tensor> {
        NonNull::new(p).map(|ptr| Tensor { ptr })
    }

    /// Gives up ownership of the reference (the caller must release it).
    pub fn into_raw(self) -> *mut sys::kb_tensor {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    /// The handle, borrowed.
    pub fn as_ptr(&self) -> *mut sys::kb_tensor {
        self.ptr.as_ptr()
    }

    /// A constant holding a copy of `data` (row-major) with `shape`.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(Error::new(
                Status::Shape,
                format!("from_slice: {} values for shape {:?}", data.len(), shape),
            ));
        }
        let dims = shape_i64(shape);
        new_tensor(|o| unsafe {
            sys::kb_tensor_from_data(
                array_ptr(data).cast(),
                T::DTYPE.code(),
                array_ptr(&dims),
                dims.len(),
                o,
            )
        })
    }

    /// A scalar constant.
    pub fn scalar<T: Element>(value: T) -> Result<Tensor> {
        Tensor::from_slice(&[value], &[])
    }

    /// A scalar constant of this tensor's dtype (how the operators take numbers).
    pub fn scalar_like(&self, value: f64) -> Result<Tensor> {
        let dtype = self.dtype()?;
        new_tensor(|o| unsafe {
            sys::kb_constant(
                (&value as *const f64).cast(),
                sys::KB_FLOAT64,
                ptr::null(),
                0,
                dtype.code(),
                ptr::null(),
                0,
                ptr::null(),
                o,
            )
        })
    }

    /// The value (of a constant, a variable, or a tensor that needs no placeholder).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let dtype = self.dtype()?;
        if dtype != T::DTYPE {
            return Err(Error::new(
                Status::DType,
                format!("to_vec: the tensor is {dtype}, not {}", T::DTYPE),
            ));
        }
        let value = if self.int_shape()?.is_some_and(|s| s.iter().all(Option::is_some)) {
            self.clone()
        } else {
            self.eval()?
        };
        let mut nbytes = 0usize;
        check(unsafe { sys::kb_tensor_nbytes(value.as_ptr(), &mut nbytes) })?;
        let mut out = vec![T::default(); nbytes / std::mem::size_of::<T>()];
        check(unsafe { sys::kb_tensor_copy_to(value.as_ptr(), out.as_mut_ptr().cast(), nbytes) })?;
        Ok(out)
    }

    /// Keras' int_shape: None for an unknown rank, None entries for unknown dimensions.
    pub fn int_shape(&self) -> Result<Option<Vec<Option<usize>>>> {
        let mut dims = [0i64; 64];
        let mut rank = 0i64;
        check(unsafe { sys::kb_int_shape(self.as_ptr(), dims.as_mut_ptr(), 64, &mut rank) })?;
        if rank < 0 {
            return Ok(None);
        }
        let mut dims = dims.to_vec();
        if rank > 64 {
            dims = vec![0; rank as usize];
            check(unsafe {
                sys::kb_int_shape(self.as_ptr(), dims.as_mut_ptr(), dims.len(), &mut rank)
            })?;
        }
        Ok(Some(dims[..rank as usize].iter().map(|&d| (d >= 0).then_some(d as usize)).collect()))
    }

    /// Keras' get_variable_shape: a variable's shape (`kb_get_variable_shape`).
    pub fn variable_shape(&self) -> Result<Vec<i64>> {
        let mut dims = vec![0i64; 64];
        let mut rank = 0i64;
        check(unsafe {
            sys::kb_get_variable_shape(self.as_ptr(), dims.as_mut_ptr(), dims.len(), &mut rank)
        })?;
        if rank as usize > dims.len() {
            dims = vec![0; rank as usize];
            check(unsafe {
                sys::kb_get_variable_shape(self.as_ptr(), dims.as_mut_ptr(), dims.len(), &mut rank)
            })?;
        }
        dims.truncate(rank.max(0) as usize);
        Ok(dims)
    }

    /// Keras' `dtype`: the element type (`kb_dtype`).
    pub fn dtype(&self) -> Result<DType> {
        let mut out = 0;
        check(unsafe { sys::kb_dtype(self.as_ptr(), &mut out) })?;
        DType::from_code(out).ok_or_else(|| Error::new(Status::DType, "unknown dtype code"))
    }

    /// The tensor's name (`kb_tensor_name`).
    pub fn name(&self) -> Result<String> {
        let mut out = ptr::null();
        check(unsafe { sys::kb_tensor_name(self.as_ptr(), &mut out) })?;
        Ok(unsafe { CStr::from_ptr(out) }.to_string_lossy().into_owned())
    }

    /// Equal ids mean the same graph value.
    pub fn id(&self) -> Result<u64> {
        let mut out = 0;
        check(unsafe { sys::kb_tensor_id(self.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// Sets a variable's value.
    pub fn set_value<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<()> {
        let dims = shape_i64(shape);
        check(unsafe {
            sys::kb_set_value_data(
                self.as_ptr(),
                array_ptr(data).cast(),
                T::DTYPE.code(),
                array_ptr(&dims),
                dims.len(),
            )
        })
    }

    /// Keras' `relu` with its defaults: max(x, 0) (`kb_relu`).
    pub fn relu(&self) -> Result<Tensor> {
        self.relu_with(0.0, None, 0.0)
    }

    /// Keras' `relu(x, alpha, max_value, threshold)`: `alpha * (x - threshold)` below
    /// `threshold`, else x capped at `max_value` (None: no cap) (`kb_relu`).
    pub fn relu_with(&self, alpha: f64, max_value: Option<f64>, threshold: f64) -> Result<Tensor> {
        let mv = max_value.as_ref().map_or(ptr::null(), |v| v as *const f64);
        new_tensor(|o| unsafe { sys::kb_relu(self.as_ptr(), alpha, mv, threshold, o) })
    }

    /// NumPy's x[begin:end:stride, ...] with one entry per axis (no masks).
    pub fn strided_slice(&self, begin: &[i64], end: &[i64], strides: &[i64]) -> Result<Tensor> {
        if begin.len() != end.len() || begin.len() != strides.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                "strided_slice: begin, end and strides differ in length",
            ));
        }
        new_tensor(|o| unsafe {
            sys::kb_strided_slice(
                self.as_ptr(),
                array_ptr(begin),
                array_ptr(end),
                array_ptr(strides),
                begin.len(),
                0,
                0,
                0,
                0,
                o,
            )
        })
    }
}

// ---- operators: `a + b`, `a * 2.0`, `1.0 - a`, `-a` (panic with the library's message) --------

fn or_panic(r: Result<Tensor>) -> Tensor {
    r.unwrap_or_else(|e| panic!("kbackend: {e}"))
}

macro_rules! operator {
    ($trait:ident, $method:ident, $named:ident) => {
        impl std::ops::$trait<&Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                or_panic(Tensor::$named(self, rhs))
            }
        }
        impl std::ops::$trait<Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                or_panic(Tensor::$named(&self, &rhs))
            }
        }
        impl std::ops::$trait<&Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                or_panic(Tensor::$named(&self, rhs))
            }
        }
        impl std::ops::$trait<Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                or_panic(Tensor::$named(self, &rhs))
            }
        }
        impl std::ops::$trait<f64> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f64) -> Tensor {
                or_panic(self.scalar_like(rhs).and_then(|r| Tensor::$named(self, &r)))
            }
        }
        impl std::ops::$trait<f64> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: f64) -> Tensor {
                std::ops::$trait::$method(&self, rhs)
            }
        }
        impl std::ops::$trait<&Tensor> for f64 {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                or_panic(rhs.scalar_like(self).and_then(|l| Tensor::$named(&l, rhs)))
            }
        }
        impl std::ops::$trait<Tensor> for f64 {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                std::ops::$trait::$method(self, &rhs)
            }
        }
    };
}
operator!(Add, add, add);
operator!(Sub, sub, subtract);
operator!(Mul, mul, multiply);
operator!(Div, div, divide);

impl std::ops::Neg for &Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        or_panic(self.negative())
    }
}

impl std::ops::Neg for Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        -&self
    }
}

// ---- creating tensors ---------------------------------------------------------------------

/// A placeholder; -1 marks an unknown dimension.
pub fn placeholder(shape: &[i64], dtype: DType, name: Option<&str>) -> Result<Tensor> {
    let name = opt_cstring(name)?;
    new_tensor(|o| unsafe {
        sys::kb_placeholder(
            array_ptr(shape),
            shape.len(),
            shape.len() as i64,
            dtype.code(),
            0,
            opt_ptr(&name),
            o,
        )
    })
}

/// A variable initialized with a copy of `data` (its own dtype).
pub fn variable<T: Element>(data: &[T], shape: &[usize], name: Option<&str>) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    if n != data.len() {
        return Err(Error::new(
            Status::Shape,
            format!("variable: {} values for shape {:?}", data.len(), shape),
        ));
    }
    let name = opt_cstring(name)?;
    let dims = shape_i64(shape);
    new_tensor(|o| unsafe {
        sys::kb_variable(
            array_ptr(data).cast(),
            T::DTYPE.code(),
            array_ptr(&dims),
            dims.len(),
            T::DTYPE.code(),
            opt_ptr(&name),
            o,
        )
    })
}

/// A variable initialized with the value of `value` (a tensor that needs no placeholder).
pub fn variable_from(value: &Tensor, name: Option<&str>) -> Result<Tensor> {
    let name = opt_cstring(name)?;
    new_tensor(|o| unsafe {
        sys::kb_variable_from_tensor(value.as_ptr(), sys::KB_DTYPE_DEFAULT, opt_ptr(&name), o)
    })
}

/// Keras' zeros (a variable).
pub fn zeros(shape: &[usize], dtype: DType, name: Option<&str>) -> Result<Tensor> {
    let name = opt_cstring(name)?;
    let dims = shape_i64(shape);
    new_tensor(|o| unsafe {
        sys::kb_zeros(array_ptr(&dims), dims.len(), dtype.code(), opt_ptr(&name), o)
    })
}

/// Keras' ones (a variable).
pub fn ones(shape: &[usize], dtype: DType, name: Option<&str>) -> Result<Tensor> {
    let name = opt_cstring(name)?;
    let dims = shape_i64(shape);
    new_tensor(|o| unsafe {
        sys::kb_ones(array_ptr(&dims), dims.len(), dtype.code(), opt_ptr(&name), o)
    })
}

/// Keras' `eye`: a variable holding the `size` x `size` identity matrix (`kb_eye`).
pub fn eye(size: i64, dtype: DType) -> Result<Tensor> {
    new_tensor(|o| unsafe { sys::kb_eye(size, dtype.code(), ptr::null(), o) })
}

/// Keras' `random_uniform_variable`: a variable drawn from U[low, high); `seed` None picks
/// a random seed (`kb_random_uniform_variable`).
pub fn random_uniform_variable(
    shape: &[usize],
    low: f64,
    high: f64,
    dtype: DType,
    seed: Option<i64>,
) -> Result<Tensor> {
    let dims = shape_i64(shape);
    let seed_ptr = seed.as_ref().map_or(ptr::null(), |s| s as *const i64);
    new_tensor(|o| unsafe {
        sys::kb_random_uniform_variable(
            array_ptr(&dims),
            dims.len(),
            low,
            high,
            dtype.code(),
            ptr::null(),
            seed_ptr,
            o,
        )
    })
}

/// Keras' `random_normal_variable`: a variable drawn from a normal distribution of `mean` and
/// standard deviation `scale`; `seed` None picks a random seed (`kb_random_normal_variable`).
pub fn random_normal_variable(
    shape: &[usize],
    mean: f64,
    scale: f64,
    dtype: DType,
    seed: Option<i64>,
    name: Option<&str>,
) -> Result<Tensor> {
    let name = opt_cstring(name)?;
    let dims = shape_i64(shape);
    let seed_ptr = seed.as_ref().map_or(ptr::null(), |s| s as *const i64);
    new_tensor(|o| unsafe {
        sys::kb_random_normal_variable(
            array_ptr(&dims),
            dims.len(),
            mean,
            scale,
            dtype.code(),
            opt_ptr(&name),
            seed_ptr,
            o,
        )
    })
}

// ---- functions of several tensors -----------------------------------------------------------

/// Keras' `concatenate`: the tensors joined along `axis` (`kb_concatenate`).
pub fn concatenate(xs: &[&Tensor], axis: i64) -> Result<Tensor> {
    let h = handles(xs);
    new_tensor(|o| unsafe { sys::kb_concatenate(array_ptr(&h), h.len(), axis, o) })
}

/// Keras' `stack`: the tensors (of one shape) stacked along a new `axis` (`kb_stack`).
pub fn stack(xs: &[&Tensor], axis: i64) -> Result<Tensor> {
    let h = handles(xs);
    new_tensor(|o| unsafe { sys::kb_stack(array_ptr(&h), h.len(), axis, o) })
}

/// axes None: Keras' default.
pub fn batch_dot(x: &Tensor, y: &Tensor, axes: Option<(i64, i64)>) -> Result<Tensor> {
    let a = axes.map(|(p, q)| [p, q]);
    let ap = a.as_ref().map_or(ptr::null(), |a| a.as_ptr());
    new_tensor(|o| unsafe { sys::kb_batch_dot(x.as_ptr(), y.as_ptr(), ap, o) })
}

/// Keras' `categorical_crossentropy(target, output, from_logits, axis)`: the loss of each
/// sample for one-hot targets (`kb_categorical_crossentropy`).
pub fn categorical_crossentropy(
    target: &Tensor,
    output: &Tensor,
    from_logits: bool,
    axis: i64,
) -> Result<Tensor> {
    new_tensor(|o| unsafe {
        sys::kb_categorical_crossentropy(
            target.as_ptr(),
            output.as_ptr(),
            from_logits as i32,
            axis,
            o,
        )
    })
}

/// Keras' `sparse_categorical_crossentropy(target, output, from_logits, axis)`: the loss of
/// each sample for integer class targets (`kb_sparse_categorical_crossentropy`).
pub fn sparse_categorical_crossentropy(
    target: &Tensor,
    output: &Tensor,
    from_logits: bool,
    axis: i64,
) -> Result<Tensor> {
    new_tensor(|o| unsafe {
        sys::kb_sparse_categorical_crossentropy(
            target.as_ptr(),
            output.as_ptr(),
            from_logits as i32,
            axis,
            o,
        )
    })
}

/// Keras' `binary_crossentropy(target, output, from_logits)`, elementwise
/// (`kb_binary_crossentropy`).
pub fn binary_crossentropy(target: &Tensor, output: &Tensor, from_logits: bool) -> Result<Tensor> {
    new_tensor(|o| unsafe {
        sys::kb_binary_crossentropy(target.as_ptr(), output.as_ptr(), from_logits as i32, o)
    })
}

/// Keras' `in_top_k`: whether each target class is among the `k` largest predictions of its
/// row, as bool (`kb_in_top_k`).
pub fn in_top_k(predictions: &Tensor, targets: &Tensor, k: i64) -> Result<Tensor> {
    new_tensor(|o| unsafe { sys::kb_in_top_k(predictions.as_ptr(), targets.as_ptr(), k, o) })
}

/// The gradients of `loss` with respect to `variables` (zeros where not connected).
pub fn gradients(loss: &Tensor, variables: &[&Tensor]) -> Result<Vec<Tensor>> {
    let h = handles(variables);
    let mut list = ptr::null_mut();
    check(unsafe { sys::kb_gradients(loss.as_ptr(), array_ptr(&h), h.len(), &mut list) })?;
    unsafe { take_list(list) }
}

/// 2-D pooling; strides None: Keras' (1, 1).
pub fn pool2d(
    x: &Tensor,
    pool_size: (i64, i64),
    strides: Option<(i64, i64)>,
    padding: Padding,
    data_format: DataFormat,
    pool_mode: PoolMode,
) -> Result<Tensor> {
    let pool = [pool_size.0, pool_size.1];
    let s = strides.map(|(a, b)| [a, b]);
    let (sp, sn) = s.as_ref().map_or((ptr::null(), 0), |s| (s.as_ptr(), 2));
    new_tensor(|o| unsafe {
        sys::kb_pool2d(
            x.as_ptr(),
            pool.as_ptr(),
            2,
            sp,
            sn,
            padding.code(),
            data_format.code(),
            pool_mode.code(),
            o,
        )
    })
}

// ---- configuration ------------------------------------------------------------------------

/// The library's version string.
pub fn version() -> String {
    unsafe { CStr::from_ptr(sys::kb_version()) }.to_string_lossy().into_owned()
}

/// The version number of the library's C ABI (`kb_abi_version`).
pub fn abi_version() -> i32 {
    unsafe { sys::kb_abi_version() }
}

/// Keras' `floatx`: the default float dtype (`kb_floatx`).
pub fn floatx() -> Result<DType> {
    let mut out = 0;
    check(unsafe { sys::kb_floatx(&mut out) })?;
    DType::from_code(out).ok_or_else(|| Error::new(Status::DType, "unknown floatx"))
}

/// Keras' `cast_to_floatx`: `values` converted to floatx, whose element type `U` must be
/// (`kb_cast_to_floatx`; `cast_to_floatx::<i32, f32>(&[1, 2])`).
pub fn cast_to_floatx<T: Element, U: Element>(values: &[T]) -> Result<Vec<U>> {
    let fx = floatx()?;
    if U::DTYPE != fx {
        return Err(Error::new(
            Status::DType,
            format!("cast_to_floatx: floatx is {}, not {}", fx.name(), U::DTYPE.name()),
        ));
    }
    let mut out = vec![U::default(); values.len()];
    check(unsafe {
        sys::kb_cast_to_floatx(
            array_ptr(values).cast(),
            T::DTYPE.code(),
            values.len(),
            out.as_mut_ptr().cast(),
        )
    })?;
    Ok(out)
}

/// A sparse tensor from COO data: `indices` holds nnz x rank coordinates (row-major), `values`
/// nnz values converted to `dtype` (None: floatx) (`kb_sparse_from_coo`). Functions see its dense
/// value except dot (sparse x dense matrix) and concatenate (all sparse), which keep it sparse.
pub fn sparse_from_coo<T: Element>(
    indices: &[i64],
    values: &[T],
    dense_shape: &[i64],
    dtype: Option<DType>,
    name: Option<&str>,
) -> Result<Tensor> {
    if indices.len() != values.len() * dense_shape.len() {
        return Err(Error::new(
            Status::InvalidArgument,
            "sparse_from_coo: indices must hold nnz x rank coordinates",
        ));
    }
    let name = opt_cstring(name)?;
    new_tensor(|o| unsafe {
        sys::kb_sparse_from_coo(
            array_ptr(indices),
            array_ptr(values).cast(),
            T::DTYPE.code(),
            values.len(),
            array_ptr(dense_shape),
            dense_shape.len(),
            dtype.map_or(sys::KB_DTYPE_DEFAULT, DType::code),
            name.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
            o,
        )
    })
}

/// A (rows, cols) sparse matrix in CSR form (scipy.sparse.csr_matrix): `indptr` has rows + 1
/// offsets, row r's entries are `col_indices` / `values` from `indptr[r]` to `indptr[r + 1]`
/// (`kb_sparse_from_csr`).
pub fn sparse_from_csr<T: Element>(
    indptr: &[i64],
    col_indices: &[i64],
    values: &[T],
    cols: i64,
    dtype: Option<DType>,
    name: Option<&str>,
) -> Result<Tensor> {
    let rows = indptr.len() as i64 - 1;
    if rows < 0
        || col_indices.len() != values.len()
        || indptr.last().copied() != Some(values.len() as i64)
    {
        return Err(Error::new(
            Status::InvalidArgument,
            "sparse_from_csr: indptr must hold rows + 1 offsets ending at the entries' count, \
             and col_indices one index per value",
        ));
    }
    let name = opt_cstring(name)?;
    new_tensor(|o| unsafe {
        sys::kb_sparse_from_csr(
            array_ptr(indptr),
            array_ptr(col_indices),
            array_ptr(values).cast(),
            T::DTYPE.code(),
            rows,
            cols,
            dtype.map_or(sys::KB_DTYPE_DEFAULT, DType::code),
            name.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
            o,
        )
    })
}

type PrintSink = dyn Fn(&str) + Send + Sync;

unsafe extern "C" fn print_trampoline(text: *const c_char, user_data: *mut c_void) {
    let sink = &*(user_data as *const Box<PrintSink>);
    let text = CStr::from_ptr(text).to_string_lossy();
    // a panic must not unwind into C; print_tensor has no status to report it by
    let _ = catch_unwind(AssertUnwindSafe(|| sink(&text)));
}

/// Where print_tensor writes (default: stderr); None restores the default
/// (`kb_set_print_sink`). Compiled functions print from any thread at any later time, so a sink
/// lives as long as the process.
pub fn set_print_sink<F: Fn(&str) + Send + Sync + 'static>(sink: Option<F>) -> Result<()> {
    match sink {
        None => check(unsafe { sys::kb_set_print_sink(None, ptr::null_mut()) }),
        Some(f) => {
            let boxed: Box<Box<PrintSink>> = Box::new(Box::new(f));
            let user_data = Box::into_raw(boxed).cast();
            check(unsafe { sys::kb_set_print_sink(Some(print_trampoline), user_data) })
        }
    }
}

/// Keras' `set_floatx`: sets the default float dtype (`kb_set_floatx`).
pub fn set_floatx(dtype: DType) -> Result<()> {
    check(unsafe { sys::kb_set_floatx(dtype.code()) })
}

/// Keras' `epsilon`: the fuzz factor of numeric expressions, 1e-7 by default (`kb_epsilon`).
pub fn epsilon() -> Result<f64> {
    let mut out = 0.0;
    check(unsafe { sys::kb_epsilon(&mut out) })?;
    Ok(out)
}

/// Keras' `set_epsilon`: sets the fuzz factor of numeric expressions (`kb_set_epsilon`).
pub fn set_epsilon(value: f64) -> Result<()> {
    check(unsafe { sys::kb_set_epsilon(value) })
}

/// Threads of the CPU kernels (for every function and thread of the process).
pub fn num_threads() -> Result<i32> {
    let mut out = 0;
    check(unsafe { sys::kb_num_threads(&mut out) })?;
    Ok(out)
}

/// `n >= 1`, or 0 for the default (`KB_NUM_THREADS`, else `OMP_NUM_THREADS`, else the cores).
pub fn set_num_threads(n: i32) -> Result<()> {
    check(unsafe { sys::kb_set_num_threads(n) })
}

/// Keras' `image_data_format`: the process-wide data format (`kb_image_data_format`).
pub fn image_data_format() -> Result<DataFormat> {
    let mut out = 0;
    check(unsafe { sys::kb_image_data_format(&mut out) })?;
    Ok(if out == sys::KB_CHANNELS_FIRST {
        DataFormat::ChannelsFirst
    } else {
        DataFormat::ChannelsLast
    })
}

/// Keras 1's `image_dim_ordering` (`kb_image_dim_ordering`).
pub fn image_dim_ordering() -> Result<backend::DimOrdering> {
    let mut out = 0;
    check(unsafe { sys::kb_image_dim_ordering(&mut out) })?;
    Ok(if out == sys::KB_DIM_ORDERING_TH {
        backend::DimOrdering::Th
    } else {
        backend::DimOrdering::Tf
    })
}

/// Keras' `batch_set_value`: each variable of `xs` takes the value of the tensor beside it in
/// `values` (`kb_batch_set_value`).
pub fn batch_set_value(xs: &[&Tensor], values: &[&Tensor]) -> Result<()> {
    if xs.len() != values.len() {
        return Err(Error::new(
            Status::InvalidArgument,
            "batch_set_value: xs and values differ in length",
        ));
    }
    let (x, v) = (handles(xs), handles(values));
    check(unsafe { sys::kb_batch_set_value(array_ptr(&x), array_ptr(&v), x.len()) })
}

/// Keras' `set_learning_phase`: fixes the process-wide learning phase, 0 test or 1 train
/// (`kb_set_learning_phase`).
pub fn set_learning_phase(value: i32) -> Result<()> {
    check(unsafe { sys::kb_set_learning_phase(value) })
}

/// Keras' `learning_phase`: the learning phase as a tensor, 0 test or 1 train
/// (`kb_learning_phase`).
pub fn learning_phase() -> Result<Tensor> {
    new_tensor(|o| unsafe { sys::kb_learning_phase(o) })
}

/// The number of devices of a kind (`kb_device_count`).
pub fn device_count(device: Device) -> Result<i64> {
    let mut out = 0;
    check(unsafe { sys::kb_device_count(device.code(), &mut out) })?;
    Ok(out)
}

// ---- data-parallel training --------------------------------------------------------------------

/// How a collective combines the processes' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// The sum over the processes.
    Sum,
    /// The sum divided by the number of processes (integers truncate).
    Average,
}

impl Reduce {
    fn code(self) -> sys::kb_reduce_op {
        match self {
            Reduce::Sum => sys::KB_REDUCE_SUM,
            Reduce::Average => sys::KB_REDUCE_AVERAGE,
        }
    }
}

/// The sum or average of x over the processes, each time a function computes it (kb_all_reduce).
pub fn all_reduce(x: &Tensor, op: Reduce) -> Result<Tensor> {
    new_tensor(|o| unsafe { sys::kb_all_reduce(x.as_ptr(), op.code(), o) })
}

/// Rank root's x on every process (kb_broadcast).
pub fn broadcast(x: &Tensor, root: i32) -> Result<Tensor> {
    new_tensor(|o| unsafe { sys::kb_broadcast(x.as_ptr(), root, o) })
}

/// The processes' x concatenated along axis 0 in rank order (kb_all_gather).
pub fn all_gather(x: &Tensor) -> Result<Tensor> {
    new_tensor(|o| unsafe { sys::kb_all_gather(x.as_ptr(), o) })
}

/// The processes of a data-parallel job (kb_dist_*): one per device or host, started by an MPI
/// launcher (`mpirun -np 2 ./train`). Before `init`, or without a launcher, the process is rank 0
/// of 1 and every collective is the identity.
pub mod dist {
    use super::{check, handles, sys, Element, Error, Reduce, Result, Status, Tensor};
    use std::ffi::CStr;

    /// Joins the job (kb_dist_init). Without MPI: `Err` with `Status::Unavailable`, or with
    /// `required` false `Ok(false)`, the process training alone.
    pub fn init(required: bool) -> Result<bool> {
        match check(unsafe { sys::kb_dist_init() }) {
            Ok(()) => Ok(true),
            Err(e) if e.status == Status::Unavailable && !required => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn query<T: Default>(f: unsafe extern "C" fn(*mut T) -> sys::kb_status) -> Result<T> {
        let mut out = T::default();
        check(unsafe { f(&mut out) })?;
        Ok(out)
    }

    /// This process' rank in the job, 0 before `init` (`kb_dist_rank`).
    pub fn rank() -> Result<i32> {
        query(sys::kb_dist_rank)
    }

    /// The number of processes in the job, 1 before `init` (`kb_dist_size`).
    pub fn size() -> Result<i32> {
        query(sys::kb_dist_size)
    }

    /// The rank among the processes of this host.
    pub fn local_rank() -> Result<i32> {
        query(sys::kb_dist_local_rank)
    }

    /// Collectives run through the engine (a bucket of all-reduces counts once).
    pub fn collectives() -> Result<i64> {
        query(sys::kb_dist_collectives)
    }

    /// The seconds a collective waits at most (`kb_dist_timeout`; 300 by default, or
    /// `KB_DIST_TIMEOUT`).
    pub fn timeout() -> Result<f64> {
        query(sys::kb_dist_timeout)
    }

    /// Sets the seconds a collective waits at most (`kb_dist_set_timeout`).
    pub fn set_timeout(seconds: f64) -> Result<()> {
        check(unsafe { sys::kb_dist_set_timeout(seconds) })
    }

    /// Waits until every process has reached the barrier (`kb_dist_barrier`).
    pub fn barrier() -> Result<()> {
        check(unsafe { sys::kb_dist_barrier() })
    }

    /// Waits for every process, then leaves the job (MPI cannot start again in this process).
    pub fn finalize() -> Result<()> {
        check(unsafe { sys::kb_dist_finalize() })
    }

    /// The engine's version ("" before `init`).
    pub fn engine() -> String {
        // SAFETY: a library-owned, thread-local string.
        unsafe { CStr::from_ptr(sys::kb_dist_engine()) }.to_string_lossy().into_owned()
    }

    /// Every variable takes rank root's value (initial weights).
    pub fn broadcast_variables(variables: &[&Tensor], root: i32) -> Result<()> {
        let h = handles(variables);
        check(unsafe { sys::kb_dist_broadcast_variables(h.as_ptr(), h.len(), root) })
    }

    /// The sum or average over the processes of every process' values (metrics).
    pub fn all_reduce<T: Element>(values: &[T], op: Reduce) -> Result<Vec<T>> {
        if T::DTYPE == super::DType::Bool {
            return Err(Error::new(Status::DType, "dist::all_reduce: bool cannot be summed"));
        }
        let mut out = vec![T::default(); values.len()];
        check(unsafe {
            sys::kb_dist_all_reduce(
                values.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                values.len(),
                T::DTYPE.code(),
                op.code(),
            )
        })?;
        Ok(out)
    }
}

// ---- compiled functions -----------------------------------------------------------------------

/// A compiled function: inputs are fed by position, outputs come back as constants, updates run
/// on every call.
pub struct Function {
    ptr: NonNull<sys::kb_compiled_function>,
}

// SAFETY: a kb_compiled_function serializes its own calls; release may run on any thread.
unsafe impl Send for Function {}
unsafe impl Sync for Function {}

impl Drop for Function {
    fn drop(&mut self) {
        unsafe { sys::kb_function_release(self.ptr.as_ptr()) }
    }
}

impl Function {
    /// Keras' `function(inputs, outputs, updates)`: compiles the graph from `inputs` to
    /// `outputs`; `updates` run on every call (`kb_function`).
    pub fn new(inputs: &[&Tensor], outputs: &[&Tensor], updates: &[&Tensor]) -> Result<Function> {
        let (i, o, u) = (handles(inputs), handles(outputs), handles(updates));
        let mut f = ptr::null_mut();
        check(unsafe {
            sys::kb_function(
                array_ptr(&i),
                i.len(),
                array_ptr(&o),
                o.len(),
                array_ptr(&u),
                u.len(),
                &mut f,
            )
        })?;
        NonNull::new(f)
            .map(|ptr| Function { ptr })
            .ok_or_else(|| Error::new(Status::Internal, "the library returned no function"))
    }

    /// Runs the function writing output k into `outputs[k]` (concrete tensors of the outputs'
    /// dtypes and shapes, e.g. an earlier call's results): no allocation in a steady state
    /// (`kb_function_call_into`).
    pub fn call_into(&self, inputs: &[&Tensor], outputs: &[&Tensor]) -> Result<()> {
        let (i, o) = (handles(inputs), handles(outputs));
        check(unsafe {
            sys::kb_function_call_into(
                self.ptr.as_ptr(),
                array_ptr(&i),
                i.len(),
                array_ptr(&o),
                o.len(),
            )
        })
    }

    /// Runs the function on constants (Tensor::from_slice), one per input.
    pub fn call(&self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let h = handles(inputs);
        let mut list = ptr::null_mut();
        check(unsafe {
            sys::kb_function_call(self.ptr.as_ptr(), array_ptr(&h), h.len(), &mut list)
        })?;
        unsafe { take_list(list) }
    }

    /// Where the function runs (`kb_function_device`).
    pub fn device(&self) -> Result<Device> {
        let mut out = 0;
        check(unsafe { sys::kb_function_device(self.ptr.as_ptr(), &mut out) })?;
        Ok(if out == sys::KB_DEVICE_CUDA { Device::Cuda } else { Device::Cpu })
    }

    /// Makes the function run on `device` (`kb_function_set_device`).
    pub fn set_device(&self, device: Device) -> Result<()> {
        check(unsafe { sys::kb_function_set_device(self.ptr.as_ptr(), device.code()) })
    }

    /// Where the function runs, as `"cpu"` or `"cuda:N"` (`kb_function_device_name`).
    pub fn device_name(&self) -> Result<String> {
        let mut out = ptr::null();
        check(unsafe { sys::kb_function_device_name(self.ptr.as_ptr(), &mut out) })?;
        Ok(unsafe { CStr::from_ptr(out) }.to_string_lossy().into_owned())
    }

    /// Makes the function run on `"cpu"`, `"cuda"` or `"cuda:N"`, N being this process' GPU
    /// (`kb_function_set_device_name`).
    pub fn set_device_name(&self, device: &str) -> Result<()> {
        let device = cstring(device)?;
        check(unsafe { sys::kb_function_set_device_name(self.ptr.as_ptr(), device.as_ptr()) })
    }
}

/// One device this process can run on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// CPU or CUDA.
    pub kind: Device,
    /// The N of cuda:N (0 for the CPU).
    pub index: i64,
    /// The product name.
    pub name: String,
    /// Memory in bytes (the machine's for the CPU).
    pub memory: i64,
}

/// The devices this process can run on: the CPU, then its GPU if it has one.
pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    let mut out = Vec::new();
    for kind in [Device::Cpu, Device::Cuda] {
        for position in 0..device_count(kind)? {
            out.push(DeviceInfo {
                kind,
                index: backend::device_index(kind, position)?,
                name: backend::device_name(kind, position)?,
                memory: backend::device_memory(kind, position)?,
            });
        }
    }
    Ok(out)
}

// ---- closures: map_fn, foldl, foldr, rnn --------------------------------------------------

/// The closure and what it left behind, shared with a trampoline through user_data.
struct Callback<F> {
    f: F,
    error: Option<Error>,
}

/// A tensor the library lends to a callback, as an owned Tensor (retained).
unsafe fn lent(p: *mut sys::kb_tensor) -> Tensor {
    sys::kb_tensor_retain(p);
    Tensor::from_raw(p).expect("the library lent a NULL tensor")
}

/// Runs the closure, catching panics; on failure records the error, reports it to the library
/// and returns its status.
fn run_callback<F, R>(
    cb: &mut Callback<F>,
    who: &str,
    body: impl FnOnce(&mut F) -> Result<R>,
    done: impl FnOnce(R),
) -> sys::kb_status {
    let result = catch_unwind(AssertUnwindSafe(|| body(&mut cb.f)));
    let error = match result {
        Ok(Ok(r)) => {
            done(r);
            return sys::KB_OK;
        }
        Ok(Err(e)) => e,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Error::new(Status::Internal, format!("{who}: the closure panicked: {what}"))
        }
    };
    let message = CString::new(error.message.replace('\0', " ")).unwrap_or_default();
    unsafe { sys::kb_set_error(error.status.code(), message.as_ptr()) };
    let code = error.status.code();
    cb.error = Some(error);
    code
}

/// The building function's result: the closure's own error when it failed.
fn finish<F>(cb: Callback<F>, status: sys::kb_status) -> Result<()> {
    match (status, cb.error) {
        (sys::KB_OK, _) => Ok(()),
        (_, Some(e)) => Err(e),
        (code, None) => check(code),
    }
}

unsafe extern "C" fn map_trampoline<F: FnMut(&Tensor) -> Result<Tensor>>(
    user_data: *mut c_void,
    x: *mut sys::kb_tensor,
    out: *mut *mut sys::kb_tensor,
) -> sys::kb_status {
    let cb = &mut *(user_data as *mut Callback<F>);
    let x = lent(x);
    run_callback(cb, "map_fn", |f| f(&x), |t| *out = t.into_raw())
}

/// Keras' map_fn: `f` applied to every element of `elems` along its first axis.
pub fn map_fn<F: FnMut(&Tensor) -> Result<Tensor>>(
    f: F,
    elems: &Tensor,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let mut cb = Callback { f, error: None };
    let mut out = ptr::null_mut();
    let status = unsafe {
        sys::kb_map_fn(
            Some(map_trampoline::<F>),
            (&mut cb as *mut Callback<F>).cast(),
            elems.as_ptr(),
            ptr::null(),
            dtype.map_or(sys::KB_DTYPE_DEFAULT, DType::code),
            &mut out,
        )
    };
    finish(cb, status)?;
    unsafe { Tensor::from_raw(out) }.ok_or_else(|| Error::new(Status::Internal, "no result"))
}

unsafe extern "C" fn fold_trampoline<F: FnMut(&Tensor, &Tensor) -> Result<Tensor>>(
    user_data: *mut c_void,
    acc: *mut sys::kb_tensor,
    x: *mut sys::kb_tensor,
    out: *mut *mut sys::kb_tensor,
) -> sys::kb_status {
    let cb = &mut *(user_data as *mut Callback<F>);
    let (acc, x) = (lent(acc), lent(x));
    run_callback(cb, "fold", |f| f(&acc, &x), |t| *out = t.into_raw())
}

type FoldFn = unsafe extern "C" fn(
    sys::kb_fold_function,
    *mut c_void,
    *mut sys::kb_tensor,
    *mut sys::kb_tensor,
    *const std::ffi::c_char,
    *mut *mut sys::kb_tensor,
) -> sys::kb_status;

fn fold<F: FnMut(&Tensor, &Tensor) -> Result<Tensor>>(
    c: FoldFn,
    f: F,
    elems: &Tensor,
    initializer: Option<&Tensor>,
) -> Result<Tensor> {
    let mut cb = Callback { f, error: None };
    let mut out = ptr::null_mut();
    let status = unsafe {
        c(
            Some(fold_trampoline::<F>),
            (&mut cb as *mut Callback<F>).cast(),
            elems.as_ptr(),
            initializer.map_or(ptr::null_mut(), Tensor::as_ptr),
            ptr::null(),
            &mut out,
        )
    };
    finish(cb, status)?;
    unsafe { Tensor::from_raw(out) }.ok_or_else(|| Error::new(Status::Internal, "no result"))
}

/// Keras' foldl: `f(acc, x)` over the first axis of `elems` (initializer None: the first
/// element starts).
pub fn foldl<F: FnMut(&Tensor, &Tensor) -> Result<Tensor>>(
    f: F,
    elems: &Tensor,
    initializer: Option<&Tensor>,
) -> Result<Tensor> {
    fold(sys::kb_foldl, f, elems, initializer)
}

/// Keras' foldr (from the last element).
pub fn foldr<F: FnMut(&Tensor, &Tensor) -> Result<Tensor>>(
    f: F,
    elems: &Tensor,
    initializer: Option<&Tensor>,
) -> Result<Tensor> {
    fold(sys::kb_foldr, f, elems, initializer)
}

type StepResult = Result<(Tensor, Vec<Tensor>)>;

unsafe extern "C" fn step_trampoline<F: FnMut(&Tensor, &[Tensor]) -> StepResult>(
    user_data: *mut c_void,
    input: *mut sys::kb_tensor,
    states: *const *mut sys::kb_tensor,
    n: usize,
    output: *mut *mut sys::kb_tensor,
    new_states: *mut *mut sys::kb_tensor_list,
) -> sys::kb_status {
    let cb = &mut *(user_data as *mut Callback<F>);
    let input = lent(input);
    let states: Vec<Tensor> = (0..n).map(|i| lent(*states.add(i))).collect();
    let mut list_status = sys::KB_OK;
    let status = run_callback(
        cb,
        "rnn",
        |f| f(&input, &states),
        |(out, next)| {
            let h: Vec<*mut sys::kb_tensor> = next.iter().map(Tensor::as_ptr).collect();
            let mut list = ptr::null_mut();
            list_status = sys::kb_tensor_list_new(array_ptr(&h), h.len(), &mut list);
            if list_status == sys::KB_OK {
                *output = out.into_raw();
                *new_states = list;
            }
        },
    );
    if status == sys::KB_OK {
        list_status
    } else {
        status
    }
}

unsafe extern "C" fn branch_trampoline<F: FnMut() -> Result<Tensor>>(
    user_data: *mut c_void,
    out: *mut *mut sys::kb_tensor,
) -> sys::kb_status {
    let cb = &mut *(user_data as *mut Callback<F>);
    run_callback(cb, "branch", |f| f(), |t| *out = t.into_raw())
}

/// A C function taking two branch callbacks and their data.
type BranchCall<'a> = &'a mut dyn FnMut(
    sys::kb_branch_function,
    *mut c_void,
    sys::kb_branch_function,
    *mut c_void,
    *mut *mut sys::kb_tensor,
) -> sys::kb_status;

fn with_branches<A, B>(a: A, b: B, build: BranchCall<'_>) -> Result<Tensor>
where
    A: FnMut() -> Result<Tensor>,
    B: FnMut() -> Result<Tensor>,
{
    let mut ca = Callback { f: a, error: None };
    let mut cb = Callback { f: b, error: None };
    let mut out = ptr::null_mut();
    let status = build(
        Some(branch_trampoline::<A>),
        (&mut ca as *mut Callback<A>).cast(),
        Some(branch_trampoline::<B>),
        (&mut cb as *mut Callback<B>).cast(),
        &mut out,
    );
    let error = ca.error.take().or(cb.error.take());
    finish(Callback { f: (), error }, status)?;
    unsafe { Tensor::from_raw(out) }
        .ok_or_else(|| Error::new(Status::Internal, "the library returned no tensor"))
}

/// Keras' switch with closures for the branches (`kb_switch_fn`): each is called at most once,
/// while the graph is built; a closure's error or panic comes back out.
pub fn switch_fn<A, B>(condition: &Tensor, then_fn: A, else_fn: B) -> Result<Tensor>
where
    A: FnMut() -> Result<Tensor>,
    B: FnMut() -> Result<Tensor>,
{
    with_branches(then_fn, else_fn, &mut |a, da, b, db, o| unsafe {
        sys::kb_switch_fn(condition.as_ptr(), a, da, b, db, o)
    })
}

/// The C phase functions (`kb_in_train_phase_fn`, `kb_in_test_phase_fn`).
type PhaseFn = unsafe extern "C" fn(
    sys::kb_branch_function,
    *mut c_void,
    sys::kb_branch_function,
    *mut c_void,
    *mut sys::kb_tensor,
    sys::kb_training,
    *mut *mut sys::kb_tensor,
) -> sys::kb_status;

fn phase_fn<A, B>(
    c_fn: PhaseFn,
    x: A,
    alt: B,
    training: Option<&Tensor>,
    mode: backend::Training,
) -> Result<Tensor>
where
    A: FnMut() -> Result<Tensor>,
    B: FnMut() -> Result<Tensor>,
{
    let t = training.map_or(ptr::null_mut(), |t| t.as_ptr());
    with_branches(x, alt, &mut |a, da, b, db, o| unsafe { c_fn(a, da, b, db, t, mode.code(), o) })
}

/// Keras' in_train_phase with closures (`kb_in_train_phase_fn`): a fixed `mode` calls only the
/// chosen one; `training` None with `Training::Tensor` follows the learning phase.
pub fn in_train_phase_fn<A, B>(
    x: A,
    alt: B,
    training: Option<&Tensor>,
    mode: backend::Training,
) -> Result<Tensor>
where
    A: FnMut() -> Result<Tensor>,
    B: FnMut() -> Result<Tensor>,
{
    phase_fn(sys::kb_in_train_phase_fn, x, alt, training, mode)
}

/// Keras' in_test_phase with closures (`kb_in_test_phase_fn`).
pub fn in_test_phase_fn<A, B>(
    x: A,
    alt: B,
    training: Option<&Tensor>,
    mode: backend::Training,
) -> Result<Tensor>
where
    A: FnMut() -> Result<Tensor>,
    B: FnMut() -> Result<Tensor>,
{
    phase_fn(sys::kb_in_test_phase_fn, x, alt, training, mode)
}

/// Keras' rnn: `step(input, states)` returns `(output, new_states)`; `states` holds the states
/// followed by the constants. Returns (last_output, outputs, new_states).
pub fn rnn<F: FnMut(&Tensor, &[Tensor]) -> StepResult>(
    step: F,
    inputs: &Tensor,
    initial_states: &[&Tensor],
    go_backwards: bool,
    mask: Option<&Tensor>,
    constants: &[&Tensor],
    unroll: bool,
) -> Result<(Tensor, Tensor, Vec<Tensor>)> {
    let mut cb = Callback { f: step, error: None };
    let (s, c) = (handles(initial_states), handles(constants));
    let (mut last, mut outputs, mut states) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    let status = unsafe {
        sys::kb_rnn(
            Some(step_trampoline::<F>),
            (&mut cb as *mut Callback<F>).cast(),
            inputs.as_ptr(),
            array_ptr(&s),
            s.len(),
            go_backwards as i32,
            mask.map_or(ptr::null_mut(), Tensor::as_ptr),
            array_ptr(&c),
            c.len(),
            unroll as i32,
            ptr::null(),
            &mut last,
            &mut outputs,
            &mut states,
        )
    };
    finish(cb, status)?;
    unsafe {
        let no = || Error::new(Status::Internal, "rnn: no result");
        Ok((
            Tensor::from_raw(last).ok_or_else(no)?,
            Tensor::from_raw(outputs).ok_or_else(no)?,
            take_list(states)?,
        ))
    }
}
