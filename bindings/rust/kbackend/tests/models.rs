//! kbackend::models against a hand computation and through a save/load round trip.
use kbackend::models::{ExportOnnxOptions, FitOptions, Model};
use kbackend::{Status, Tensor};

const DENSE: &str = r#"{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "linear", "batch_input_shape": [null, 3]}}]}}"#;

#[test]
fn dense_predicts_trains_saves_and_loads() -> kbackend::Result<()> {
    let mut m = Model::from_json(DENSE)?;
    let w = Tensor::from_slice(&[1f32, 2., 3., 4., 5., 6.], &[3, 2])?;
    let b = Tensor::from_slice(&[0.5f32, -1.], &[2])?;
    m.set_layer_weights(0, &[&w, &b])?;
    let x = Tensor::from_slice(&[1f32, 0., 2., -1., 1., 0.], &[2, 3])?;
    let p = m.predict(&[&x], 32)?;
    assert_eq!(p[0].to_vec::<f32>()?, vec![11.5, 13., 2.5, 1.]);
    m.compile("sgd", &["mse"], &[], Some(r#"{"optimizer": {"lr": 0.1}}"#))?;
    let y = Tensor::from_slice(&[11f32, 13., 2.5, 0.], &[2, 2])?;
    let loss = m.train_on_batch(&[&x], &[&y])?;
    assert!((loss[0] - 0.3125).abs() < 1e-6);
    let mut epochs = 0;
    let ckpt = std::env::temp_dir().join(format!("kb_rust_ckpt_{}.h5", std::process::id()));
    let ckpt = ckpt.to_str().unwrap().to_string();
    // The callback may use the model: it saves it at each epoch's end (Keras' ModelCheckpoint).
    let mut losses = Vec::new();
    let mut count = |model: &Model, _e: i64, batch: i64, logs: &kbackend::models::Logs| {
        if batch == -1 {
            epochs += 1;
            losses.push(logs["loss"]);
            model.save(&ckpt, true).unwrap();
        }
        false
    };
    let history = m.fit_with(
        &[&x],
        &[&y],
        &FitOptions { epochs: 3, ..Default::default() },
        Some(&mut count),
    )?;
    assert_eq!(epochs, 3);
    assert_eq!(Model::load(&ckpt, true)?.layer_class(0)?, "Dense");
    std::fs::remove_file(&ckpt).ok();
    // The history and the logs as values: one loss per epoch, the logs' at each epoch's end.
    assert_eq!(history.values["loss"], losses);
    assert!(history.json.contains("\"loss\""));
    let path = std::env::temp_dir().join(format!("kb_rust_model_{}.h5", std::process::id()));
    let path = path.to_str().unwrap();
    m.save(path, true)?;
    let mut again = Model::load(path, true)?;
    assert_eq!(
        again.predict(&[&x], 32)?[0].to_vec::<f32>()?,
        m.predict(&[&x], 32)?[0].to_vec::<f32>()?
    );
    assert_eq!(again.layer_class(0)?, "Dense");
    assert!(again.summary()?.contains("Total params: 8"));
    assert_eq!(again.count_params()?, 8); // generated from the C function's row
    std::fs::remove_file(path).ok();
    Ok(())
}

#[test]
fn errors_carry_status_and_message() {
    let e = Model::load("/nonexistent.h5", true).err().unwrap();
    assert_eq!(e.status, Status::NotFound);
    assert!(e.message.contains("/nonexistent.h5: no such file"));
    // As std::fs reports it (api/kbackend.toml's [errors]).
    assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::NotFound);
    let e = Model::from_json(r#"{"class_name": "Sequential", "config": {"layers": [{"class_name": "Lambda", "config": {"name": "f"}}]}}"#).err().unwrap();
    assert_eq!(e.status, Status::NotImplemented);
    let mut m = Model::from_json(DENSE).unwrap();
    let x = Tensor::from_slice(&[1f32, 2., 3.], &[1, 3]).unwrap();
    assert!(m.fit(&[&x], &[&x], &FitOptions::default()).is_err()); // not compiled
}

#[test]
fn sample_weights_validation_data_and_reset_states() -> kbackend::Result<()> {
    let mut m = Model::from_json(DENSE)?;
    m.compile("sgd", &["mse"], &[], None)?;
    let x = Tensor::from_slice(&[1f32, 0., 2., -1., 1., 0.], &[2, 3])?;
    let y = Tensor::from_slice(&[1f32, 1., 0., 0.], &[2, 2])?;
    let w = Tensor::from_slice(&[1f32, 0.], &[2])?;
    let h = m.fit_weighted(&[&x], &[&y], &[&w], &[&x], &[&y], &[], &FitOptions::default())?;
    assert_eq!(h.values["val_loss"].len(), 1);
    let short = Tensor::from_slice(&[1f32], &[1])?;
    assert!(m
        .fit_weighted(&[&x], &[&y], &[&short], &[], &[], &[], &FitOptions::default())
        .is_err());
    m.reset_states()?; // no stateful layer: nothing to do
    Ok(())
}

#[test]
fn the_model_as_graph_values() -> kbackend::Result<()> {
    let mut m = Model::from_json(DENSE)?;
    let w = Tensor::from_slice(&[1f32, 2., 3., 4., 5., 6.], &[3, 2])?;
    let b = Tensor::from_slice(&[0.5f32, -1.], &[2])?;
    m.set_layer_weights(0, &[&w, &b])?;
    assert!(m.layer_config(0)?.contains("\"units\":2"), "{}", m.layer_config(0)?);
    let (inputs, outputs) = (m.inputs()?, m.outputs()?);
    assert_eq!((inputs.len(), outputs.len(), m.weights()?.len()), (1, 1, 2));
    // A function of one's own over the model's graph computes what predict does.
    let f = kbackend::Function::new(&[&inputs[0]], &[&outputs[0]], &[])?;
    let x = Tensor::from_slice(&[1f32, 0., 2., -1., 1., 0.], &[2, 3])?;
    let own = f.call(&[&x])?;
    assert_eq!(own[0].to_vec::<f32>()?, m.predict_on_batch(&[&x])?[0].to_vec::<f32>()?);
    assert_eq!(own[0].to_vec::<f32>()?, vec![11.5, 13., 2.5, 1.]);
    // An extra loss term: the sum of the kernel's squares, in the loss from the next compile.
    let kernel = &m.weights()?[0];
    m.add_loss(&kbackend::backend::sum(&kbackend::backend::square(kernel)?, None, false)?)?;
    m.compile("sgd", &["mse"], &[], None)?;
    assert_eq!((m.targets()?.len(), m.sample_weights()?.len()), (1, 1));
    assert!(!m.updates()?.is_empty());
    let y = Tensor::from_slice(&[11.5f32, 13., 2.5, 1.], &[2, 2])?;
    let loss = m.test_on_batch(&[&x], &[&y])?;
    assert!((loss[0] - 91.0).abs() < 1e-4, "{loss:?}"); // mse 0, then 1 + 4 + ... + 36
    assert_eq!(m.total_loss()?.ndim()?, 0);
    Ok(())
}

#[test]
fn custom_layers() -> kbackend::Result<()> {
    // y = x + b, b a weight of ones; {"fail": true} in the config fails.
    kbackend::models::register_layer("AddBias", |layer, config, inputs| {
        if config.contains("\"fail\":true") {
            return Err(kbackend::Error::new(Status::InvalidArgument, "asked to fail"));
        }
        let width = inputs[0].int_shape()?.unwrap().last().copied().flatten().unwrap() as i64;
        let b = layer.add_weight("b", &[width], "\"ones\"", true)?;
        Ok(vec![kbackend::backend::add(&inputs[0], &b)?])
    })?;
    let json = r#"{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "AddBias", "config": {"name": "ab", "batch_input_shape": [null, 2]}}]}}"#;
    let mut m = Model::from_json(json)?;
    let x = Tensor::from_slice(&[1f32, 2.], &[1, 2])?;
    assert_eq!(m.predict(&[&x], 32)?[0].to_vec::<f32>()?, vec![2., 3.]);
    assert_eq!(m.weights()?.len(), 1);
    let failing = json.replace("\"name\": \"ab\"", "\"name\": \"ab\", \"fail\": true");
    let err = Model::from_json(&failing).unwrap_err();
    assert!(err.message.contains("layer 'ab' (AddBias): asked to fail"), "{}", err.message);
    kbackend::models::register_layer("Panics", |_, _, _| panic!("boom"))?;
    let err = Model::from_json(&json.replace("AddBias", "Panics")).unwrap_err();
    assert!(err.message.contains("panicked"), "{}", err.message);
    Ok(())
}

#[test]
fn options_as_values_and_unknown_keys() -> kbackend::Result<()> {
    use kbackend::models::CompileOptions;
    let mut f = FitOptions { shuffle: false, validation_split: 0.25, ..Default::default() };
    assert_eq!((f.batch_size, f.epochs, f.verbose, f.seed), (32, 1, 1, 0)); // Keras' defaults
    f.class_weight.insert(-1, 2.5);
    f.class_weight.insert(0, 1.0);
    assert_eq!(
        f.options_json()?,
        r#"{"shuffle": false, "seed": 0, "validation_split": 0.25, "initial_epoch": 0, "class_weight": {"-1": 2.5, "0": 1}, "distributed": false}"#
    );
    f.validation_split = f64::NAN;
    assert_eq!(f.options_json().err().unwrap().status, Status::InvalidArgument);
    let mut m = Model::from_json(DENSE)?;
    let e = m.compile("sgd", &["mse"], &[], Some(r#"{"loss_weight": [1]}"#)).err().unwrap();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(
        e.message.contains("unknown key 'loss_weight' (did you mean 'loss_weights'?)"),
        "{}",
        e
    );
    let c = CompileOptions { loss_weights: vec![2.0], ..Default::default() };
    assert_eq!(c.options_json()?, r#"{"loss_weights": [2]}"#);
    m.compile_with("sgd", &["mse"], &[], &c)?;
    let x = Tensor::from_slice(&[1f32, 0., 2., -1., 1., 0.], &[2, 3])?;
    let y = Tensor::from_slice(&[1f32, 0., 0., 1.], &[2, 2])?;
    let quiet = FitOptions { verbose: 0, shuffle: false, ..Default::default() };
    assert_eq!(m.fit(&[&x], &[&y], &quiet)?.values["loss"].len(), 1);
    Ok(())
}

// Keras' callbacks as values: the rate halves on each epoch without an improvement of 100, and
// training stops once patience runs out.
#[test]
fn keras_callbacks_run_in_fit() -> kbackend::Result<()> {
    use kbackend::callbacks::{EarlyStopping, ModelCheckpoint, ReduceLROnPlateau};
    let checkpoint = ModelCheckpoint {
        filepath: "a\"b.keras".to_string(),
        save_freq: 3.into(),
        ..Default::default()
    };
    let text = checkpoint.json()?;
    assert!(
        text.starts_with(
            r#"{"class_name": "ModelCheckpoint", "config": {"filepath": "a\"b.keras""#
        ),
        "{}",
        text
    );
    assert!(text.contains(r#""save_freq": 3"#), "{}", text);
    let mut m = Model::from_json(DENSE)?;
    m.compile("sgd", &["mse"], &[], Some(r#"{"optimizer": {"lr": 0.01}}"#))?;
    let x = Tensor::from_slice(&[1f32, 0., 2., -1., 1., 0.], &[2, 3])?;
    let y = Tensor::from_slice(&[1f32, 0., 0., 1.], &[2, 2])?;
    let options = FitOptions {
        epochs: 10,
        verbose: 0,
        callbacks: vec![
            ReduceLROnPlateau {
                monitor: "loss".into(),
                patience: 1,
                factor: 0.5,
                min_delta: 100.0,
                ..Default::default()
            }
            .into(),
            EarlyStopping {
                monitor: "loss".into(),
                patience: 3,
                min_delta: 100.0,
                ..Default::default()
            }
            .into(),
        ],
        ..Default::default()
    };
    let h = m.fit(&[&x], &[&y], &options)?;
    let rates: Vec<f64> = [0.01f32, 0.01, 0.005, 0.0025].iter().map(|r| *r as f64).collect();
    assert_eq!(h.values["learning_rate"], rates);
    let bad = FitOptions {
        callbacks: vec![EarlyStopping {
            mode: "sideways".into(),
            monitor: "x".into(),
            ..Default::default()
        }
        .into()],
        verbose: 0,
        ..Default::default()
    };
    // mode falls back to auto (as Keras warns), which cannot tell which way x improves
    let e = m.fit(&[&x], &[&y], &bad).err().unwrap();
    assert_eq!(e.status, Status::InvalidArgument);
    Ok(())
}

#[test]
fn the_history_as_values() -> kbackend::Result<()> {
    let mut m = Model::from_json(DENSE)?;
    m.compile("sgd", &["mse"], &["mae"], None)?;
    let x = Tensor::from_slice(&[1f32, 0., 2., -1., 1., 0.], &[2, 3])?;
    let y = Tensor::from_slice(&[1f32, 0., 0., 1.], &[2, 2])?;
    let h = m.fit(&[&x], &[&y], &FitOptions { epochs: 4, verbose: 0, ..Default::default() })?;
    assert_eq!(h.values.keys().collect::<Vec<_>>(), ["loss", "mae"]);
    assert!(h.values["loss"].len() == 4 && h.values["loss"].iter().all(|v| v.is_finite()));
    Ok(())
}

/// mlp.keras, saved by Keras 3.15: predictions and test loss as Keras computed them
/// (mlp_expected.txt: inputs, targets, predictions), three steps of training, and an archive
/// again that loads with the same predictions.
#[test]
fn keras3_archive_loads_predicts_trains_and_saves() -> kbackend::Result<()> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../tests/model_files/keras3");
    let text = std::fs::read_to_string(format!("{dir}/mlp_expected.txt")).unwrap();
    let fields: Vec<f64> = text.split_whitespace().map(|f| f.parse().unwrap()).collect();
    let (rows, inputs, classes, keras_loss) =
        (fields[0] as usize, fields[1] as usize, fields[2] as usize, fields[3]);
    let (mut x, mut y, mut want) = (Vec::new(), Vec::new(), Vec::new());
    for row in fields[4..].chunks(inputs + 2 * classes).take(rows) {
        x.extend(row[..inputs].iter().map(|&v| v as f32));
        y.extend(row[inputs..inputs + classes].iter().map(|&v| v as f32));
        want.extend(row[inputs + classes..].iter().map(|&v| v as f32));
    }
    let x = Tensor::from_slice(&x, &[rows, inputs])?;
    let y = Tensor::from_slice(&y, &[rows, classes])?;
    let mut m = Model::load(&format!("{dir}/mlp.keras"), true)?;
    let got = m.predict(&[&x], 32)?[0].to_vec::<f32>()?;
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5, "prediction {g}, Keras {w}");
    }
    let loss = m.test_on_batch(&[&x], &[&y])?[0];
    assert!((loss - keras_loss).abs() <= 1e-4 * keras_loss, "loss {loss}, Keras {keras_loss}");
    for _ in 0..3 {
        m.train_on_batch(&[&x], &[&y])?;
    }
    let path = std::env::temp_dir().join(format!("kb_rust_keras3_{}.keras", std::process::id()));
    let path = path.to_str().unwrap();
    m.save(path, true)?; // an archive again, by the extension
    let mut again = Model::load(path, true)?;
    assert_eq!(
        again.predict(&[&x], 32)?[0].to_vec::<f32>()?,
        m.predict(&[&x], 32)?[0].to_vec::<f32>()?
    );
    std::fs::remove_file(path).ok();
    Ok(())
}

/// The model's inference graph as an ONNX file (the plugin's checker passed on it), and the
/// refusal of an opset the export does not write.
#[test]
fn models_export_to_onnx() -> kbackend::Result<()> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../tests/model_files/keras3");
    let m = Model::load(&format!("{dir}/mlp.keras"), false)?;
    let path = std::env::temp_dir().join(format!("kb_rust_{}.onnx", std::process::id()));
    let path = path.to_str().unwrap();
    m.export_onnx(path, &ExportOnnxOptions::default())?;
    assert!(std::fs::metadata(path).unwrap().len() > 1000);
    let e =
        m.export_onnx(path, &ExportOnnxOptions { opset: 18, ..Default::default() }).unwrap_err();
    assert_eq!(e.status, Status::NotImplemented);
    assert!(e.to_string().contains("opset 18"), "{e}");
    std::fs::remove_file(path).ok();
    Ok(())
}

#[test]
fn a_float32_model_computes_in_bfloat16() -> kbackend::Result<()> {
    // Keras' clone_model with each layer's dtype set: bfloat16 computation over float32 weights.
    let m = Model::from_json(DENSE)?;
    let x = Tensor::from_slice(&[1f32, 2., 3.], &[1, 3])?;
    let mut mixed = m.with_dtype_policy("mixed_bfloat16")?;
    assert_eq!(mixed.predict_on_batch(&[&x])?[0].dtype()?, kbackend::DType::BF16);
    assert_eq!(mixed.layer_weights(0)?[0].dtype()?, kbackend::DType::F32);
    let mut back = mixed.with_dtype_policy("float32")?;
    let mut plain = m;
    assert_eq!(
        back.predict_on_batch(&[&x])?[0].to_vec::<f32>()?,
        plain.predict_on_batch(&[&x])?[0].to_vec::<f32>()?
    );
    let e = plain.with_dtype_policy("int8").err().unwrap();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("does not keep float32 variables"), "{}", e.message);
    Ok(())
}
