//! The generated `backend` module against known values, one or more functions per family.
use kbackend::backend::{self as k, Interpolation, Training};
use kbackend::{DataFormat, Padding, PoolMode, Status, Tensor};

fn t(data: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape).unwrap()
}

fn values(x: &Tensor) -> Vec<f32> {
    x.to_vec::<f32>().unwrap()
}

fn close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

fn image() -> Tensor {
    t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[1, 3, 3, 1])
}

#[test]
fn convolution_with_defaults_and_options() {
    let ones = t(&[1.0; 4], &[2, 2, 1, 1]);
    let valid = k::conv2d(&image(), &ones, &[], Padding::Valid, DataFormat::ChannelsLast, &[]);
    close(&values(&valid.unwrap()), &[12.0, 16.0, 24.0, 28.0]);
    let same = k::conv2d(&image(), &ones, &[1, 1], Padding::Same, DataFormat::ChannelsLast, &[]);
    close(&values(&same.unwrap()), &[12.0, 16.0, 9.0, 24.0, 28.0, 15.0, 15.0, 17.0, 9.0]);
    let strided =
        k::conv2d(&image(), &ones, &[2, 2], Padding::Valid, DataFormat::ChannelsLast, &[]);
    close(&values(&strided.unwrap()), &[12.0]);
    let x = t(&[1.0, 2.0, 3.0, 4.0], &[1, 4, 1]);
    let diff = t(&[1.0, -1.0], &[2, 1, 1]);
    let c1 = k::conv1d(&x, &diff, 1, Padding::Valid, DataFormat::ChannelsLast, 1).unwrap();
    close(&values(&c1), &[-1.0, -1.0, -1.0]);
    let bad = k::conv2d(&image(), &ones, &[1, 1, 1], Padding::Valid, DataFormat::ChannelsLast, &[]);
    assert_eq!(bad.unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn pooling_padding_and_resizing() {
    let p =
        k::pool2d(&image(), &[2, 2], &[], Padding::Valid, DataFormat::ChannelsLast, PoolMode::Max);
    close(&values(&p.unwrap()), &[5.0, 6.0, 8.0, 9.0]);
    let padded = k::spatial_2d_padding(&image(), &[], DataFormat::ChannelsLast).unwrap();
    assert_eq!(padded.int_shape().unwrap(), Some(vec![Some(1), Some(5), Some(5), Some(1)]));
    assert_eq!(values(&padded).iter().sum::<f32>(), 45.0);
    let big =
        k::resize_images(&image(), 2, 2, DataFormat::ChannelsLast, Interpolation::Nearest).unwrap();
    assert_eq!(big.int_shape().unwrap(), Some(vec![Some(1), Some(6), Some(6), Some(1)]));
}

#[test]
fn reductions_shapes_and_shared_lengths() {
    let x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    close(&values(&k::sum(&x, Some(&[1]), false).unwrap()), &[6.0, 15.0]);
    close(&values(&k::sum(&x, None, false).unwrap()), &[21.0]);
    let kept = k::max(&x, Some(&[0]), true).unwrap();
    assert_eq!(kept.int_shape().unwrap(), Some(vec![Some(1), Some(3)]));
    close(&values(&k::slice(&x, &[0, 1], &[2, 2]).unwrap()), &[2.0, 3.0, 5.0, 6.0]);
    let err = k::slice(&x, &[0, 1], &[2]).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("one length"), "{}", err.message);
    let row = k::strided_slice(&x, &[1, 0], &[2, 3], &[1, 2], 0, 0, 1, 0).unwrap();
    close(&values(&row), &[4.0, 6.0]);
    let y = k::batch_dot(&x, &x, Some((1, 1))).unwrap();
    close(&values(&y), &[14.0, 77.0]);
}

#[test]
fn nn_ctc_and_normalization() {
    let relu = k::relu(&t(&[-1.0, 0.5, 3.0], &[3]), 0.0, Some(2.0), 0.0).unwrap();
    close(&values(&relu), &[0.0, 0.5, 2.0]);
    // Best path: classes 0, 0, 1 (2 is the blank): repeats merged gives [0, 1].
    let probs = t(&[0.7, 0.2, 0.1, 0.6, 0.3, 0.1, 0.1, 0.8, 0.1], &[1, 3, 3]);
    let lengths = Tensor::from_slice(&[3i32], &[1]).unwrap();
    let (decoded, log_prob) = k::ctc_decode(&probs, &lengths, true, 100, 1).unwrap();
    assert_eq!(decoded.len(), 1);
    assert_eq!(decoded[0].to_vec::<i64>().unwrap(), vec![0, 1]);
    let eps = kbackend::epsilon().unwrap() as f32;
    let expected = -((0.7 + eps).ln() + (0.6 + eps).ln() + (0.8 + eps).ln());
    close(&values(&log_prob), &[expected]);
    let x = t(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let (mean, var) = (t(&[2.5], &[1]), t(&[1.25], &[1]));
    let bn = k::batch_normalization(&x, &mean, &var, None, None, -1, 1e-3).unwrap();
    let s = (1.25f32 + 1e-3).sqrt();
    close(&values(&bn), &[-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s]);
}

#[test]
fn random_dropout_and_control() {
    let a = k::random_uniform(&[100], 0.0, 1.0, None, Some(7)).unwrap();
    let b = k::random_uniform(&[100], 0.0, 1.0, None, Some(7)).unwrap();
    let (va, vb) = (values(&a), values(&b));
    assert_eq!(va, vb);
    assert!(va.iter().all(|v| (0.0..1.0).contains(v)));
    let x = t(&[1.0, 2.0], &[2]);
    close(&values(&k::dropout(&x, 0.0, None, Some(1)).unwrap()), &[1.0, 2.0]);
    let alt = t(&[5.0, 6.0], &[2]);
    let train = k::in_train_phase(&x, &alt, None, Training::True).unwrap();
    close(&values(&train), &[1.0, 2.0]);
    let test = k::in_test_phase(&x, &alt, None, Training::True).unwrap();
    close(&values(&test), &[5.0, 6.0]);
    let r = k::arange(1.0, Some(4.0), 1.0, kbackend::DType::I32).unwrap();
    assert_eq!(r.to_vec::<i32>().unwrap(), vec![1, 2, 3]);
}

#[test]
fn strings_booleans_and_names() {
    let v = k::variable_from_tensor(&t(&[1.0], &[1]), None, Some("w")).unwrap();
    assert!(k::tensor_name(&v).unwrap().contains('w'));
    assert!(!k::is_placeholder(&v).unwrap());
    assert!(k::is_tensor(&v).unwrap());
    let err = k::variable_from_tensor(&t(&[1.0], &[1]), None, Some("a\0b")).unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
}
