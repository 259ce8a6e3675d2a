//! Keras models (`kb_model_*`): load a Keras HDF5 file, train, evaluate, predict and save it,
//! with Keras' names.
//!
//! ```no_run
//! use kbackend::models::{FitOptions, Model};
//! # fn main() -> kbackend::Result<()> {
//! # let (x, y) = (kbackend::Tensor::from_slice(&[0f32; 64], &[1, 64])?,
//! #              kbackend::Tensor::from_slice(&[0f32; 10], &[1, 10])?);
//! let mut model = Model::load("model.h5", true)?;
//! let history = model.fit(&[&x], &[&y], &FitOptions { epochs: 5, ..Default::default() })?;
//! let scores = model.evaluate(&[&x], &[&y], 32)?;
//! model.save("tuned.h5", true)?;
//! # Ok(()) }
//! ```
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};

pub use crate::options::{
    CompileOptions, EvaluateOptions, ExportOnnxOptions, FitOptions, PredictOptions,
};
use crate::{
    array_ptr, check, cstring, handles, new_tensor, sys, take_list, Error, Result, Status, Tensor,
};

/// A Keras model run by kbackend's native model layer. `Drop` releases it.
pub struct Model {
    ptr: NonNull<sys::kb_model>,
}

// SAFETY: a model is used from one thread at a time (&mut self for every call that runs it).
unsafe impl Send for Model {}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").field("handle", &self.ptr).finish()
    }
}

impl Model {
    /// The C handle, still owned by this Model.
    pub fn as_ptr(&self) -> *mut sys::kb_model {
        self.ptr.as_ptr()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::kb_model_release(self.ptr.as_ptr()) }
    }
}

fn new_model(f: impl FnOnce(*mut *mut sys::kb_model) -> sys::kb_status) -> Result<Model> {
    let mut out = ptr::null_mut();
    check(f(&mut out))?;
    NonNull::new(out)
        .map(|ptr| Model { ptr })
        .ok_or_else(|| Error::new(Status::Internal, "the library returned no model"))
}

/// A string the model owns, copied.
fn owned(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn values(t: Tensor) -> Result<Vec<f64>> {
    t.to_vec::<f64>()
}

/// Keras' logs of a batch or an epoch ("loss", the metrics, "val_loss" at an epoch's end).
pub type Logs = BTreeMap<String, f64>;

/// What fit returns: each logged value per epoch (Keras' `History.history`: "loss", the
/// metrics, "val_loss"; NaN where a value was not a number), and the library's JSON of it.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// "loss": one value per epoch, and so on.
    pub values: BTreeMap<String, Vec<f64>>,
    /// The same as JSON text (`{"loss": [...], ...}`).
    pub json: String,
}

impl History {
    fn from_json(json: String) -> Result<History> {
        Ok(History { values: numbers_json(&json)?, json })
    }
}

/// The library's logs and history: one JSON object of numbers, nulls (NaN) or lists of them.
struct NumbersJson<'a> {
    text: &'a str,
    at: usize,
}

impl NumbersJson<'_> {
    fn bad(&self) -> Error {
        Error::new(Status::Internal, format!("the library's logs are not numbers: {}", self.text))
    }

    fn peek(&mut self) -> Result<u8> {
        let s = self.text.as_bytes();
        while self.at < s.len() && s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
        s.get(self.at).copied().ok_or_else(|| self.bad())
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.peek()? != c {
            return Err(self.bad());
        }
        self.at += 1;
        Ok(())
    }

    fn key(&mut self) -> Result<String> {
        self.expect(b'"')?;
        let mut key = String::new();
        let mut chars = self.text[self.at..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return Ok(key);
                }
                '\\' => key.extend(chars.next().map(|(_, c)| c)),
                c => key.push(c),
            }
        }
        Err(self.bad())
    }

    fn number(&mut self) -> Result<f64> {
        self.peek()?;
        let rest = &self.text[self.at..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        self.at += len;
        match word {
            "null" => Ok(f64::NAN),
            _ if word.starts_with(|c: char| c.is_ascii_digit() || c == '-') => {
                word.parse().map_err(|_| self.bad())
            }
            _ => Err(self.bad()),
        }
    }

    fn parse(mut self) -> Result<BTreeMap<String, Vec<f64>>> {
        let mut out = BTreeMap::new();
        self.expect(b'{')?;
        if self.peek()? == b'}' {
            return Ok(out);
        }
        loop {
            let key = self.key()?;
            self.expect(b':')?;
            let mut values = Vec::new();
            if self.peek()? == b'[' {
                self.at += 1;
                if self.peek()? == b']' {
                    self.at += 1;
                } else {
                    loop {
                        values.push(self.number()?);
                        if self.peek()? != b',' {
                            break;
                        }
                        self.at += 1;
                    }
                    self.expect(b']')?;
                }
            } else {
                values.push(self.number()?);
            }
            out.insert(key, values);
            if self.peek()? == b'}' {
                return Ok(out);
            }
            self.expect(b',')?;
        }
    }
}

fn numbers_json(text: &str) -> Result<BTreeMap<String, Vec<f64>>> {
    NumbersJson { text, at: 0 }.parse()
}

/// A fit callback: `(model, epoch, batch, logs)` after each batch and (batch -1) each epoch;
/// returning true stops training. It gets the model being trained, to save it or read its
/// weights (Keras' ModelCheckpoint).
pub type EpochCallback<'a> = dyn FnMut(&Model, i64, i64, &Logs) -> bool + 'a;

struct FitCallback<'a, 'b> {
    f: &'a mut EpochCallback<'b>,
    model: &'a Model,
    error: Option<Error>,
}

unsafe extern "C" fn fit_trampoline(
    user: *mut c_void,
    epoch: i64,
    batch: i64,
    logs: *const c_char,
) -> i32 {
    let cb = &mut *(user as *mut FitCallback);
    // A failure ends fit at once (kb_set_error before the non-zero return); fit_with gives
    // back the callback's error.
    let failed = |cb: &mut FitCallback, e: Error| {
        unsafe { sys::kb_set_error(sys::KB_ERROR_INVALID_ARGUMENT, c"fit: the callback failed".as_ptr()) };
        cb.error = Some(e);
        1
    };
    let logs: Logs = match numbers_json(&owned(logs)) {
        Ok(v) => v.into_iter().map(|(k, v)| (k, v.first().copied().unwrap_or(f64::NAN))).collect(),
        Err(e) => return failed(cb, e),
    };
    match catch_unwind(AssertUnwindSafe(|| (cb.f)(cb.model, epoch, batch, &logs))) {
        Ok(stop) => stop as i32,
        Err(_) => failed(cb, Error::new(Status::Internal, "fit: the callback panicked")),
    }
}

impl Model {
    /// A model from a Keras HDF5 file; `compile`: also from its training_config (optimizer
    /// state included).
    pub fn load(path: &str, compile: bool) -> Result<Model> {
        let p = cstring(path)?;
        new_model(|o| unsafe { sys::kb_model_load(p.as_ptr(), compile as i32, o) })
    }

    /// A model from Keras' JSON (`model.to_json()`).
    pub fn from_json(json: &str) -> Result<Model> {
        let j = cstring(json)?;
        new_model(|o| unsafe { sys::kb_model_from_json(j.as_ptr(), o) })
    }

    /// A copy (uncompiled, the same weights' values) whose float32 layers take the dtype policy
    /// `policy` (`"mixed_bfloat16"`: bfloat16 computation over float32 variables), as Keras'
    /// clone_model with each layer's dtype set (`kb_model_with_dtype_policy`).
    pub fn with_dtype_policy(&self, policy: &str) -> Result<Model> {
        let p = cstring(policy)?;
        new_model(|o| unsafe { sys::kb_model_with_dtype_policy(self.ptr.as_ptr(), p.as_ptr(), o) })
    }

    fn text(
        &self,
        f: unsafe extern "C" fn(*mut sys::kb_model, *mut *const c_char) -> sys::kb_status,
    ) -> Result<String> {
        let mut out = ptr::null();
        check(unsafe { f(self.ptr.as_ptr(), &mut out) })?;
        Ok(owned(out))
    }

    /// Keras' `model.to_json()`: the architecture as JSON (`kb_model_to_json`).
    pub fn to_json(&self) -> Result<String> {
        self.text(sys::kb_model_to_json)
    }

    /// Keras' model.summary() text.
    pub fn summary(&self) -> Result<String> {
        self.text(sys::kb_model_summary)
    }

    /// The names of evaluate's values, as a JSON list (`["loss","acc"]`).
    pub fn metrics_names(&self) -> Result<String> {
        self.text(sys::kb_model_metrics_names)
    }

    /// Keras' `model.save` to an HDF5 file; `include_optimizer`: with the training_config and the
    /// optimizer's state (`kb_model_save`).
    pub fn save(&self, path: &str, include_optimizer: bool) -> Result<()> {
        let p = cstring(path)?;
        check(unsafe {
            sys::kb_model_save(self.ptr.as_ptr(), p.as_ptr(), include_optimizer as i32)
        })
    }

    /// The model's inference graph as an ONNX file (opset 17, the batch dim free unless the
    /// options fix it), checked by ONNX's checker; an operation with no ONNX form is an error
    /// naming its layer.
    pub fn export_onnx(&self, path: &str, options: &ExportOnnxOptions) -> Result<()> {
        let p = cstring(path)?;
        let o = cstring(&options.options_json()?)?;
        check(unsafe { sys::kb_model_export_onnx(self.ptr.as_ptr(), p.as_ptr(), o.as_ptr()) })
    }

    /// Keras' `model.save_weights`: the weights to an HDF5 file (`kb_model_save_weights`).
    pub fn save_weights(&self, path: &str) -> Result<()> {
        let p = cstring(path)?;
        check(unsafe { sys::kb_model_save_weights(self.ptr.as_ptr(), p.as_ptr()) })
    }

    /// Keras' `model.load_weights` from an HDF5 file: `by_name` false matches the layers with
    /// weights in order, true by layer name (`kb_model_load_weights`).
    pub fn load_weights(&mut self, path: &str, by_name: bool) -> Result<()> {
        let p = cstring(path)?;
        check(unsafe { sys::kb_model_load_weights(self.ptr.as_ptr(), p.as_ptr(), by_name as i32) })
    }

    /// Keras' compile: `optimizer` by name ("adam") or JSON `{"class_name", "config"}`;
    /// `options_json`: `{"optimizer": {...}, "loss_weights": [...]}`.
    pub fn compile(
        &mut self,
        optimizer: &str,
        losses: &[&str],
        metrics: &[&str],
        options_json: Option<&str>,
    ) -> Result<()> {
        let opt = cstring(optimizer)?;
        let l: Vec<_> = losses.iter().map(|s| cstring(s)).collect::<Result<_>>()?;
        let m: Vec<_> = metrics.iter().map(|s| cstring(s)).collect::<Result<_>>()?;
        let lp: Vec<*const c_char> = l.iter().map(|c| c.as_ptr()).collect();
        let mp: Vec<*const c_char> = m.iter().map(|c| c.as_ptr()).collect();
        let o = options_json.map(cstring).transpose()?;
        check(unsafe {
            sys::kb_model_compile(
                self.ptr.as_ptr(),
                opt.as_ptr(),
                array_ptr(&lp),
                lp.len(),
                array_ptr(&mp),
                mp.len(),
                o.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
            )
        })
    }

    /// compile with its options as values (`loss_weights`, the optimizer's config).
    pub fn compile_with(
        &mut self,
        optimizer: &str,
        losses: &[&str],
        metrics: &[&str],
        options: &CompileOptions,
    ) -> Result<()> {
        let json = options.options_json()?;
        self.compile(optimizer, losses, metrics, Some(&json))
    }

    /// Keras' fit; returns the history (each logged value per epoch).
    pub fn fit(&mut self, x: &[&Tensor], y: &[&Tensor], options: &FitOptions) -> Result<History> {
        self.fit_with(x, y, options, None)
    }

    /// fit with `callback(model, epoch, batch, logs)`, run after each batch and (batch -1)
    /// each epoch; returning true stops training. The callback may use the model (`&Model`:
    /// `save`, `layer_weights`) while fit waits for it.
    pub fn fit_with(
        &mut self,
        x: &[&Tensor],
        y: &[&Tensor],
        options: &FitOptions,
        callback: Option<&mut EpochCallback>,
    ) -> Result<History> {
        let (xs, ys) = (handles(x), handles(y));
        let opts = cstring(&options.options_json()?)?;
        let mut history = ptr::null();
        // fit only reads the model while C trains it, so the callback may share it.
        let model: &Model = self;
        let mut cb = callback.map(|f| FitCallback { f, model, error: None });
        let (tramp, user): (sys::kb_model_callback, *mut c_void) = match cb.as_mut() {
            Some(c) => (Some(fit_trampoline), (c as *mut FitCallback).cast()),
            None => (None, ptr::null_mut()),
        };
        let status = unsafe {
            sys::kb_model_fit(
                model.ptr.as_ptr(),
                array_ptr(&xs),
                xs.len(),
                array_ptr(&ys),
                ys.len(),
                options.batch_size,
                options.epochs,
                options.verbose as i32,
                opts.as_ptr(),
                tramp,
                user,
                &mut history,
            )
        };
        if let Some(FitCallback { error: Some(e), .. }) = cb {
            return Err(e);
        }
        check(status)?;
        History::from_json(owned(history))
    }

    /// Keras' evaluate in batches of `batch_size`, its other arguments Keras' defaults
    /// (`EvaluateOptions::default()`): the loss, then the metrics (names: `metrics_names`).
    pub fn evaluate(&mut self, x: &[&Tensor], y: &[&Tensor], batch_size: i64) -> Result<Vec<f64>> {
        let options = EvaluateOptions { batch_size, ..Default::default() };
        self.evaluate_with(x, y, &options)
    }

    /// `evaluate` with its arguments as values.
    pub fn evaluate_with(
        &mut self,
        x: &[&Tensor],
        y: &[&Tensor],
        options: &EvaluateOptions,
    ) -> Result<Vec<f64>> {
        let verbose = i32::try_from(options.verbose)
            .map_err(|_| Error::new(Status::InvalidArgument, "evaluate: verbose out of range"))?;
        let (xs, ys) = (handles(x), handles(y));
        values(new_tensor(|o| unsafe {
            sys::kb_model_evaluate(
                self.ptr.as_ptr(),
                array_ptr(&xs),
                xs.len(),
                array_ptr(&ys),
                ys.len(),
                options.batch_size,
                verbose,
                o,
            )
        })?)
    }

    /// Keras' `train_on_batch`: one gradient update on one batch; the loss, then the metrics
    /// (`kb_model_train_on_batch`).
    pub fn train_on_batch(&mut self, x: &[&Tensor], y: &[&Tensor]) -> Result<Vec<f64>> {
        self.on_batch(sys::kb_model_train_on_batch, x, y)
    }

    /// Keras' `test_on_batch`: the loss, then the metrics, on one batch without training
    /// (`kb_model_test_on_batch`).
    pub fn test_on_batch(&mut self, x: &[&Tensor], y: &[&Tensor]) -> Result<Vec<f64>> {
        self.on_batch(sys::kb_model_test_on_batch, x, y)
    }

    fn on_batch(
        &mut self,
        f: unsafe extern "C" fn(
            *mut sys::kb_model,
            *const *mut sys::kb_tensor,
            usize,
            *const *mut sys::kb_tensor,
            usize,
            *mut *mut sys::kb_tensor,
        ) -> sys::kb_status,
        x: &[&Tensor],
        y: &[&Tensor],
    ) -> Result<Vec<f64>> {
        let (xs, ys) = (handles(x), handles(y));
        values(new_tensor(|o| unsafe {
            f(self.ptr.as_ptr(), array_ptr(&xs), xs.len(), array_ptr(&ys), ys.len(), o)
        })?)
    }

    /// Keras' predict in batches of `batch_size`, its other arguments Keras' defaults: one
    /// tensor per output.
    pub fn predict(&mut self, x: &[&Tensor], batch_size: i64) -> Result<Vec<Tensor>> {
        self.predict_with(x, &PredictOptions { batch_size, ..Default::default() })
    }

    /// `predict` with its arguments as values.
    pub fn predict_with(&mut self, x: &[&Tensor], options: &PredictOptions) -> Result<Vec<Tensor>> {
        let verbose = i32::try_from(options.verbose)
            .map_err(|_| Error::new(Status::InvalidArgument, "predict: verbose out of range"))?;
        let xs = handles(x);
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::kb_model_predict(
                self.ptr.as_ptr(),
                array_ptr(&xs),
                xs.len(),
                options.batch_size,
                verbose,
                &mut out,
            )
        })?;
        unsafe { take_list(out) }
    }

    /// fit with Keras' `sample_weight` (one vector per output) and `validation_data` (x, y and
    /// optionally its sample weights); empty slices: none.
    #[allow(clippy::too_many_arguments)]
    pub fn fit_weighted(
        &mut self,
        x: &[&Tensor],
        y: &[&Tensor],
        sample_weights: &[&Tensor],
        validation_x: &[&Tensor],
        validation_y: &[&Tensor],
        validation_sample_weights: &[&Tensor],
        options: &FitOptions,
    ) -> Result<History> {
        let (xs, ys) = (handles(x), handles(y));
        let (sw, vx, vy, vsw) = (
            handles(sample_weights),
            handles(validation_x),
            handles(validation_y),
            handles(validation_sample_weights),
        );
        let opts = cstring(&options.options_json()?)?;
        let mut history = ptr::null();
        check(unsafe {
            sys::kb_model_fit_weighted(
                self.ptr.as_ptr(),
                array_ptr(&xs),
                xs.len(),
                array_ptr(&ys),
                ys.len(),
                array_ptr(&sw),
                sw.len(),
                array_ptr(&vx),
                vx.len(),
                array_ptr(&vy),
                vy.len(),
                array_ptr(&vsw),
                vsw.len(),
                options.batch_size,
                options.epochs,
                options.verbose as i32,
                opts.as_ptr(),
                None,
                ptr::null_mut(),
                &mut history,
            )
        })?;
        History::from_json(owned(history))
    }

    /// Keras' reset_states: the stateful recurrent layers' states back to zeros.
    pub fn reset_states(&mut self) -> Result<()> {
        check(unsafe { sys::kb_model_reset_states(self.ptr.as_ptr()) })
    }

    /// The number of layers (Keras' `len(model.layers)`, `kb_model_layer_count`).
    pub fn layer_count(&self) -> Result<usize> {
        let mut n = 0usize;
        check(unsafe { sys::kb_model_layer_count(self.ptr.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// The name of layer `i` (`kb_model_layer_name`).
    pub fn layer_name(&self, i: usize) -> Result<String> {
        let mut out = ptr::null();
        check(unsafe { sys::kb_model_layer_name(self.ptr.as_ptr(), i, &mut out) })?;
        Ok(owned(out))
    }

    /// The class name of layer `i`, such as "Dense" (`kb_model_layer_class`).
    pub fn layer_class(&self, i: usize) -> Result<String> {
        let mut out = ptr::null();
        check(unsafe { sys::kb_model_layer_class(self.ptr.as_ptr(), i, &mut out) })?;
        Ok(owned(out))
    }

    /// A layer's weights, in Keras' order.
    pub fn layer_weights(&self, i: usize) -> Result<Vec<Tensor>> {
        let mut out = ptr::null_mut();
        check(unsafe { sys::kb_model_layer_get_weights(self.ptr.as_ptr(), i, &mut out) })?;
        unsafe { take_list(out) }
    }

    /// Keras' `layer.set_weights`: layer `i`'s weights from values of the same shapes, in
    /// Keras' order (`kb_model_layer_set_weights`).
    pub fn set_layer_weights(&mut self, i: usize, values: &[&Tensor]) -> Result<()> {
        let v = handles(values);
        check(unsafe {
            sys::kb_model_layer_set_weights(self.ptr.as_ptr(), i, array_ptr(&v), v.len())
        })
    }

    /// Layer `i`'s config as JSON, as Keras' `layer.get_config()` (`kb_model_layer_config`).
    pub fn layer_config(&self, i: usize) -> Result<String> {
        let mut out = ptr::null();
        check(unsafe { sys::kb_model_layer_config(self.ptr.as_ptr(), i, &mut out) })?;
        Ok(owned(out))
    }

    /// The outputs for one batch, one tensor per output (`kb_model_predict_on_batch`).
    pub fn predict_on_batch(&mut self, x: &[&Tensor]) -> Result<Vec<Tensor>> {
        let xs = handles(x);
        let mut out = ptr::null_mut();
        check(unsafe {
            sys::kb_model_predict_on_batch(self.ptr.as_ptr(), array_ptr(&xs), xs.len(), &mut out)
        })?;
        unsafe { take_list(out) }
    }

    fn tensors(
        &self,
        f: unsafe extern "C" fn(
            *mut sys::kb_model,
            *mut *mut sys::kb_tensor_list,
        ) -> sys::kb_status,
    ) -> Result<Vec<Tensor>> {
        let mut out = ptr::null_mut();
        check(unsafe { f(self.ptr.as_ptr(), &mut out) })?;
        unsafe { take_list(out) }
    }

    /// The model's input placeholders, to build on: extra loss terms, gradients, a
    /// [`crate::Function`] of one's own (`kb_model_inputs`).
    pub fn inputs(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::kb_model_inputs)
    }

    /// The model's outputs as graph values (`kb_model_outputs`).
    pub fn outputs(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::kb_model_outputs)
    }

    /// The model's weight variables (`kb_model_weights`).
    pub fn weights(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::kb_model_weights)
    }

    /// Keras' `model.add_loss`: a scalar over the model's tensors that the total loss includes
    /// from the next compile on (`kb_model_add_loss`).
    pub fn add_loss(&mut self, term: &Tensor) -> Result<()> {
        check(unsafe { sys::kb_model_add_loss(self.ptr.as_ptr(), term.as_ptr()) })
    }

    /// After compile: the total loss as a graph value (`kb_model_total_loss`).
    pub fn total_loss(&self) -> Result<Tensor> {
        new_tensor(|o| unsafe { sys::kb_model_total_loss(self.ptr.as_ptr(), o) })
    }

    /// After compile: the target placeholders, one per output (`kb_model_targets`).
    pub fn targets(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::kb_model_targets)
    }

    /// After compile: the per-sample weight placeholders, one per output
    /// (`kb_model_sample_weights`).
    pub fn sample_weights(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::kb_model_sample_weights)
    }

    /// After compile: the updates of one training step (`kb_model_updates`).
    pub fn updates(&self) -> Result<Vec<Tensor>> {
        self.tensors(sys::kb_model_updates)
    }
}

// ---- custom layers ------------------------------------------------------------------------

/// A custom layer while its function runs (see [`register_layer`]): where it asks for weights.
pub struct LayerContext {
    ptr: *mut sys::kb_layer,
}

impl LayerContext {
    /// The layer's weight `name` (a variable): made with the Keras initializer
    /// `initializer_json` (`"\"zeros\""`, `{"class_name": "RandomNormal", "config": {...}}`) the
    /// first time, the same variable after; saved and loaded in the order first asked for
    /// (`kb_model_layer_weight`).
    pub fn add_weight(
        &self,
        name: &str,
        shape: &[i64],
        initializer_json: &str,
        trainable: bool,
    ) -> Result<Tensor> {
        let (name, init) = (cstring(name)?, cstring(initializer_json)?);
        new_tensor(|o| unsafe {
            sys::kb_model_layer_weight(
                self.ptr,
                name.as_ptr(),
                array_ptr(shape),
                shape.len(),
                init.as_ptr(),
                trainable as i32,
                o,
            )
        })
    }
}

/// A custom layer's function: the layer, its config (JSON) and its inputs give its outputs.
type LayerFn = dyn Fn(&LayerContext, &str, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync;

unsafe extern "C" fn layer_trampoline(
    user_data: *mut c_void,
    layer: *mut sys::kb_layer,
    config_json: *const c_char,
    inputs: *const *mut sys::kb_tensor,
    num_inputs: usize,
    outputs: *mut *mut sys::kb_tensor,
    capacity: usize,
    num_outputs: *mut usize,
) -> sys::kb_status {
    let f = &*(user_data as *const Box<LayerFn>);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let context = LayerContext { ptr: layer };
        let config = owned(config_json);
        let ins: Vec<Tensor> = (0..num_inputs).map(|i| crate::lent(*inputs.add(i))).collect();
        f(&context, &config, &ins)
    }));
    let error = match result {
        Ok(Ok(outs)) if outs.len() <= capacity => {
            *num_outputs = outs.len();
            for (i, t) in outs.into_iter().enumerate() {
                *outputs.add(i) = t.into_raw();
            }
            return sys::KB_OK;
        }
        Ok(Ok(outs)) => Error::new(
            Status::InvalidArgument,
            format!("the layer function returned {} outputs, more than {capacity}", outs.len()),
        ),
        Ok(Err(e)) => e,
        Err(_) => Error::new(Status::Internal, "the layer function panicked"),
    };
    let message = std::ffi::CString::new(error.message.replace('\0', " ")).unwrap_or_default();
    sys::kb_set_error(error.status.code(), message.as_ptr());
    error.status.code()
}

/// Lets model files and JSON name the layer class `class_name` (a Lambda, a layer of one's
/// own): `f(layer, config_json, inputs)` builds its outputs with the backend's functions, as a
/// Keras layer's call does; an error or panic fails the model's loading with a message naming
/// the layer. Models may be built at any later time on any thread, so `f` lives as long as the
/// process (`kb_model_register_layer`; a class registered again is replaced).
pub fn register_layer<F>(class_name: &str, f: F) -> Result<()>
where
    F: Fn(&LayerContext, &str, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    let name = cstring(class_name)?;
    let boxed: Box<Box<LayerFn>> = Box::new(Box::new(f));
    let user_data = Box::into_raw(boxed);
    let status = unsafe {
        sys::kb_model_register_layer(name.as_ptr(), Some(layer_trampoline), user_data.cast())
    };
    if status != sys::KB_OK {
        drop(unsafe { Box::from_raw(user_data) });
    }
    check(status)
}
