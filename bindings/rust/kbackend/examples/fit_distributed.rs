//! Trains a Keras MLP (64 -> 32 relu -> 10 softmax, Adam) on the 8x8 digits across the processes
//! of an MPI job: every process reads all the digits and fits with `distributed`, taking 16 rows
//! of each step of 16 x processes, from weights of its own that fit replaces with rank 0's. Each
//! then checks its weights and validation losses against the same training in this process
//! alone with the global batch, and its weights against rank 0's.
//! Usage: mpirun -np 2 target/release/examples/fit_distributed [digits.csv] (or alone; exit
//! status 0 when the checks hold and the test accuracy is above 90%)
use kbackend::models::{EvaluateOptions, FitOptions, Model};
use kbackend::{backend, dist, Reduce, Tensor};
use std::io::Write;

const MLP: &str = r#"{"class_name": "Sequential", "config": {"name": "mlp", "layers": [
  {"class_name": "Dense", "config": {"name": "hidden", "units": 32, "activation": "relu",
   "batch_input_shape": [null, 64]}},
  {"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}]}}"#;

fn model(seed: i64) -> kbackend::Result<Model> {
    backend::set_random_seed(seed)?;
    let mut m = Model::from_json(MLP)?;
    m.compile("adam", &["categorical_crossentropy"], &["accuracy"], None)?;
    Ok(m)
}

fn main() -> kbackend::Result<()> {
    dist::init(true)?;
    let (rank, size) = (dist::rank()?, dist::size()?);
    let args: Vec<String> = std::env::args().collect();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../examples/data/");
    let digits = args.get(1).cloned().unwrap_or(format!("{}digits.csv", root));
    let text = std::fs::read_to_string(&digits).expect("cannot read the digits");
    let (mut xtr, mut ytr, mut xte, mut yte) = (vec![], vec![], vec![], vec![]);
    let (mut ntr, mut nte) = (0usize, 0usize);
    for (i, line) in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).enumerate() {
        let v: Vec<f32> = line.split(',').map(|s| s.trim().parse().unwrap()).collect();
        let mut onehot = [0f32; 10];
        onehot[v[0] as usize] = 1.0;
        let (x, y, n) = if i % 5 == 4 {
            (&mut xte, &mut yte, &mut nte) // every fifth digit tests
        } else {
            (&mut xtr, &mut ytr, &mut ntr)
        };
        x.extend(v[1..].iter().map(|p| p / 16.0));
        y.extend_from_slice(&onehot);
        *n += 1;
    }
    let x = Tensor::from_slice(&xtr, &[ntr, 64])?;
    let y = Tensor::from_slice(&ytr, &[ntr, 10])?;
    let (mut shared, mut alone) = (model(1 + rank as i64)?, model(1)?);
    let options = FitOptions {
        batch_size: 16,
        epochs: 15,
        seed: 1,
        validation_split: 0.1,
        verbose: if rank == 0 { 2 } else { 0 },
        distributed: true,
        ..Default::default()
    };
    let h = shared.fit(&[&x], &[&y], &options)?;
    let global =
        FitOptions { batch_size: 16 * size as i64, verbose: 0, distributed: false, ..options };
    let one = alone.fit(&[&x], &[&y], &global)?;
    let (mut worst, mut same) = (0f64, true);
    for (mine, reference) in shared.weights()?.iter().zip(alone.weights()?.iter()) {
        let (a, b) = (mine.to_vec::<f32>()?, reference.to_vec::<f32>()?);
        for (p, q) in a.iter().zip(&b) {
            worst = worst.max((p - q).abs() as f64);
        }
        same &= dist::all_reduce(&a, Reduce::Average)? == a;
    }
    for (p, q) in h.values["val_loss"].iter().zip(&one.values["val_loss"]) {
        worst = worst.max((p - q).abs());
    }
    let x_test = Tensor::from_slice(&xte, &[nte, 64])?;
    let y_test = Tensor::from_slice(&yte, &[nte, 10])?;
    let quiet = EvaluateOptions { batch_size: 128, verbose: 0 };
    let accuracy = shared.evaluate_with(&[&x_test], &[&y_test], &quiet)?[1];
    let ok = worst < 1e-4 && same && accuracy > 0.9;
    // One write per line: the processes share the launcher's output.
    let line = format!(
        "rank {} of {}: {} (largest difference from one process {:.2e}, the same weights as \
         every rank: {}, test accuracy {:.2}%)\n",
        rank,
        size,
        if ok { "ok" } else { "FAILED" },
        worst,
        same,
        100.0 * accuracy
    );
    std::io::stdout().write_all(line.as_bytes()).expect("stdout");
    if !ok {
        std::process::exit(1);
    }
    dist::finalize() // every process leaves the job together
}
