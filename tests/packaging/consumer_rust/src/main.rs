//! y = x * 2 + 1 through the kbackend crate, run on [1, 2, 3]. Prints OK on success.
use kbackend::{DType, Function, Tensor};

fn main() -> kbackend::Result<()> {
    let x = kbackend::placeholder(&[-1], DType::F32, Some("x"))?;
    let y = &(&x * 2.0) + 1.0;
    let f = Function::new(&[&x], &[&y], &[])?;
    let out = f.call(&[&Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3])?])?;
    let got = out[0].to_vec::<f32>()?;
    if got != [3.0, 5.0, 7.0] {
        eprintln!("consumer_rust: wrong result {got:?}");
        std::process::exit(1);
    }
    println!("OK (kbackend {}, Rust)", kbackend::version());
    Ok(())
}
