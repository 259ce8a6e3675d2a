//! Releasing: 100k tensors made and dropped do not grow memory. In a test binary of its own so
//! that no other test allocates while RSS is measured.
use kbackend::Tensor;

fn t(data: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape).unwrap()
}

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: f64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096.0 / (1024.0 * 1024.0)
}

#[test]
fn dropping_100k_tensors_does_not_grow_memory() {
    let a = t(&[1.0; 16], &[16]);
    let churn = |n: usize| {
        for i in 0..n {
            let b = &a * 2.0 + i as f64; // several tensors per iteration
            let _c = b.exp().unwrap();
        }
    };
    churn(5_000);
    let before = rss_mib();
    churn(25_000);
    let grown = rss_mib() - before;
    assert!(grown < 8.0, "memory grew by {grown:.1} MiB");
    // and RSS does see tensors that are kept
    let before = rss_mib();
    let kept: Vec<Tensor> = (0..100).map(|_| t(&vec![1.0; 1 << 16], &[1 << 16])).collect();
    assert!(rss_mib() - before > 16.0);
    drop(kept);
}
