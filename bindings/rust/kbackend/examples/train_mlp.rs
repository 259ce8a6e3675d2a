//! Trains a two-layer MLP (64 -> 64 relu -> 10 softmax) on the bundled 8x8 digits with SGD using
//! the safe kbackend crate: placeholders, variables, operators, gradients, update ops and a
//! compiled function. Exits with status 2 when the test accuracy is not above 90%.
//!
//! cargo run --offline --example train_mlp [-- examples/data/digits.csv]
use kbackend::{self as kb, DType, DataFormat, Function, Tensor};
use std::process::ExitCode;

const FEATURES: usize = 64;
const CLASSES: usize = 10;

struct Data {
    x: Vec<[f32; FEATURES]>,
    y: Vec<usize>,
}

fn load(path: &str) -> Data {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut data = Data { x: Vec::new(), y: Vec::new() };
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut values = line.split(',').map(|v| v.trim().parse::<f32>().unwrap());
        data.y.push(values.next().unwrap() as usize);
        let mut row = [0.0; FEATURES];
        for (r, v) in row.iter_mut().zip(values) {
            *r = v / 16.0;
        }
        data.x.push(row);
    }
    data
}

/// A fixed pseudo-random permutation (the C example's generator).
fn shuffle(idx: &mut [usize], state: &mut u32) {
    for i in (1..idx.len()).rev() {
        *state = state.wrapping_mul(1103515245).wrapping_add(12345);
        let j = ((*state >> 8) as usize) % (i + 1);
        idx.swap(i, j);
    }
}

fn batch(data: &Data, idx: &[usize]) -> kb::Result<(Tensor, Tensor)> {
    let mut x = Vec::with_capacity(idx.len() * FEATURES);
    let mut y = vec![0.0f32; idx.len() * CLASSES];
    for (row, &i) in idx.iter().enumerate() {
        x.extend_from_slice(&data.x[i]);
        y[row * CLASSES + data.y[i]] = 1.0;
    }
    Ok((
        Tensor::from_slice(&x, &[idx.len(), FEATURES])?,
        Tensor::from_slice(&y, &[idx.len(), CLASSES])?,
    ))
}

fn run(path: &str) -> kb::Result<f64> {
    let data = load(path);
    let n = data.y.len();
    let mut idx: Vec<usize> = (0..n).collect();
    let mut state = 42u32;
    shuffle(&mut idx, &mut state);
    let n_test = n / 5;
    let (train, test) = idx.split_at_mut(n - n_test);
    println!("kbackend {}: {} training and {} test digits", kb::version(), train.len(), test.len());

    let x = kb::placeholder(&[-1, FEATURES as i64], DType::F32, Some("x"))?;
    let y = kb::placeholder(&[-1, CLASSES as i64], DType::F32, Some("y"))?;
    let w1 =
        kb::random_normal_variable(&[FEATURES, 64], 0.0, 0.125, DType::F32, Some(1), Some("w1"))?;
    let b1 = kb::zeros(&[64], DType::F32, Some("b1"))?;
    let w2 =
        kb::random_normal_variable(&[64, CLASSES], 0.0, 0.125, DType::F32, Some(2), Some("w2"))?;
    let b2 = kb::zeros(&[CLASSES], DType::F32, Some("b2"))?;

    let hidden = x.dot(&w1)?.bias_add(&b1, DataFormat::Default)?.relu()?;
    let probs = hidden.dot(&w2)?.bias_add(&b2, DataFormat::Default)?.softmax(-1)?;
    let loss = kb::categorical_crossentropy(&y, &probs, false, -1)?.mean(None, false)?;

    let params = [&w1, &b1, &w2, &b2];
    let grads = kb::gradients(&loss, &params)?;
    let updates = params
        .iter()
        .zip(&grads)
        .map(|(p, g)| p.update_sub(&(g * 0.5)))
        .collect::<kb::Result<Vec<_>>>()?;
    let train_step = Function::new(&[&x, &y], &[&loss], &updates.iter().collect::<Vec<_>>())?;
    let predict = Function::new(&[&x], &[&probs], &[])?;

    for epoch in 1..=30 {
        shuffle(train, &mut state);
        let (mut total, mut batches) = (0.0, 0);
        for chunk in train.chunks(32) {
            let (bx, by) = batch(&data, chunk)?;
            total += train_step.call(&[&bx, &by])?[0].to_vec::<f32>()?[0] as f64;
            batches += 1;
        }
        if epoch == 1 || epoch % 5 == 0 {
            println!("epoch {epoch:2}  loss {:.4}", total / batches as f64);
        }
    }

    let (tx, _) = batch(&data, test)?;
    let p = predict.call(&[&tx])?[0].to_vec::<f32>()?;
    let correct = test
        .iter()
        .enumerate()
        .filter(|(row, &i)| {
            let scores = &p[row * CLASSES..(row + 1) * CLASSES];
            let best = (0..CLASSES).max_by(|&a, &b| scores[a].total_cmp(&scores[b])).unwrap();
            best == data.y[i]
        })
        .count();
    let accuracy = correct as f64 / test.len() as f64;
    println!("test accuracy {:.2}% ({correct}/{})", 100.0 * accuracy, test.len());
    Ok(accuracy)
}

fn main() -> ExitCode {
    let default = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../examples/data/digits.csv");
    let path = std::env::args().nth(1).unwrap_or_else(|| default.to_string());
    match run(&path) {
        Ok(acc) if acc > 0.9 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(2),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
