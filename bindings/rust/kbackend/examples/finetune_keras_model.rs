//! Loads a Keras model file (examples/data/digits_mlp.h5, saved by Keras 2.2.4, or
//! digits_mlp.keras, saved by Keras 3), fine-tunes it
//! on the 8x8 digits and prints its test accuracy before and after.
//! Usage: cargo run --example finetune_keras_model [model.h5] [digits.csv]
use kbackend::models::{EvaluateOptions, FitOptions, Model};
use kbackend::Tensor;

fn main() -> kbackend::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../examples/data/");
    let model_path = args.get(1).cloned().unwrap_or(format!("{}digits_mlp.h5", root));
    let digits = args.get(2).cloned().unwrap_or(format!("{}digits.csv", root));
    let text = std::fs::read_to_string(&digits).expect("cannot read the digits");
    let (mut xtr, mut ytr, mut xte, mut yte) = (vec![], vec![], vec![], vec![]);
    let (mut ntr, mut nte) = (0usize, 0usize);
    for (i, line) in text.lines().filter(|l| !l.starts_with('#')).enumerate() {
        let v: Vec<f32> = line.split(',').map(|s| s.trim().parse().unwrap()).collect();
        let mut onehot = [0f32; 10];
        onehot[v[0] as usize] = 1.0;
        let (x, y, n) = if i % 5 == 4 {
            (&mut xte, &mut yte, &mut nte)
        } else {
            (&mut xtr, &mut ytr, &mut ntr)
        };
        x.extend(v[1..].iter().map(|p| p / 16.0));
        y.extend_from_slice(&onehot);
        *n += 1;
    }
    let x_train = Tensor::from_slice(&xtr, &[ntr, 64])?;
    let y_train = Tensor::from_slice(&ytr, &[ntr, 10])?;
    let x_test = Tensor::from_slice(&xte, &[nte, 64])?;
    let y_test = Tensor::from_slice(&yte, &[nte, 10])?;
    let mut model = Model::load(&model_path, true)?;
    print!("{}", model.summary()?);
    let quiet = EvaluateOptions { batch_size: 128, verbose: 0 };
    let before = model.evaluate_with(&[&x_test], &[&y_test], &quiet)?[1];
    let options = FitOptions { epochs: 5, seed: 1, validation_split: 0.1, ..Default::default() };
    let history = model.fit(&[&x_train], &[&y_train], &options)?;
    println!("validation loss by epoch: {:?}", history.values.get("val_loss"));
    let after = model.evaluate_with(&[&x_test], &[&y_test], &quiet)?[1];
    println!(
        "test accuracy: {:.2}% before fine-tuning, {:.2}% after ({} test digits)",
        100.0 * before,
        100.0 * after,
        nte
    );
    if after < 0.9 {
        std::process::exit(1);
    }
    Ok(())
}
