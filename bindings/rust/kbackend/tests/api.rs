//! The safe layer against known values: construction, operators, errors, functions, gradients,
//! closures, threads and releasing.
use kbackend::{self as kb, DType, DataFormat, Function, Status, Tensor};

fn t(data: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape).unwrap()
}

fn close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

#[test]
fn construction_and_inspection() {
    let a = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(a.int_shape().unwrap(), Some(vec![Some(2), Some(3)]));
    assert_eq!(a.ndim().unwrap(), 2);
    assert_eq!(a.dtype().unwrap(), DType::F32);
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let x = kb::placeholder(&[-1, 3], DType::F64, Some("inp")).unwrap();
    assert_eq!(x.int_shape().unwrap(), Some(vec![None, Some(3)]));
    assert!(x.name().unwrap().contains("inp"));
    assert_eq!(Tensor::scalar(7i64).unwrap().to_vec::<i64>().unwrap(), vec![7]);
    assert_eq!(Tensor::from_slice(&[true, false], &[2]).unwrap().dtype().unwrap(), DType::Bool);
    assert_eq!(kb::zeros(&[2], DType::I32, None).unwrap().to_vec::<i32>().unwrap(), vec![0, 0]);
    assert_eq!(kb::ones(&[3], DType::F64, None).unwrap().to_vec::<f64>().unwrap(), vec![1.0; 3]);
    assert_eq!(kb::eye(2, DType::F32).unwrap().to_vec::<f32>().unwrap(), vec![1.0, 0.0, 0.0, 1.0]);
    assert_eq!("float64".parse::<DType>().unwrap(), DType::F64);
    assert_eq!(DType::I16.name(), "int16");
    assert_eq!(kb::abi_version(), kb::sys::KB_ABI_VERSION);
    assert!(!kb::version().is_empty());
}

#[test]
fn operators_against_known_values() {
    let a = t(&[1.0, -2.0, 3.0, 4.0], &[2, 2]);
    let b = t(&[0.5, 2.0, -1.0, 8.0], &[2, 2]);
    close(&(&a + &b).to_vec().unwrap(), &[1.5, 0.0, 2.0, 12.0]);
    close(&(&a - &b).to_vec().unwrap(), &[0.5, -4.0, 4.0, -4.0]);
    close(&(&a * &b).to_vec().unwrap(), &[0.5, -4.0, -3.0, 32.0]);
    close(&(&a / &b).to_vec().unwrap(), &[2.0, -1.0, -3.0, 0.5]);
    close(&(&a * 2.0 + 1.0).to_vec().unwrap(), &[3.0, -3.0, 7.0, 9.0]);
    close(&(10.0 - &a).to_vec().unwrap(), &[9.0, 12.0, 7.0, 6.0]);
    close(&(1.0 / &b).to_vec().unwrap(), &[2.0, 0.5, -1.0, 0.125]);
    close(&(-&a).to_vec().unwrap(), &[-1.0, 2.0, -3.0, -4.0]);
    close(&(a.clone() + b.clone()).to_vec().unwrap(), &[1.5, 0.0, 2.0, 12.0]);
    close(&a.dot(&b).unwrap().to_vec().unwrap(), &[2.5, -14.0, -2.5, 38.0]);
    close(&a.square().unwrap().sum(None, false).unwrap().to_vec().unwrap(), &[30.0]);
    close(&a.mean(Some(&[1]), true).unwrap().to_vec().unwrap(), &[-0.5, 3.5]);
    assert_eq!(
        a.mean(Some(&[1]), true).unwrap().int_shape().unwrap(),
        Some(vec![Some(2), Some(1)])
    );
    close(&a.max(Some(&[0]), false).unwrap().to_vec().unwrap(), &[3.0, 4.0]);
    close(&a.relu().unwrap().to_vec().unwrap(), &[1.0, 0.0, 3.0, 4.0]);
    close(&a.relu_with(0.5, Some(3.5), 0.0).unwrap().to_vec().unwrap(), &[1.0, -1.0, 3.0, 3.5]);
    close(&a.pow(2.0).unwrap().to_vec().unwrap(), &[1.0, 4.0, 9.0, 16.0]);
    close(&a.clip(0.0, 2.0).unwrap().to_vec().unwrap(), &[1.0, 0.0, 2.0, 2.0]);
    let s = t(&[0.0, (2.0f32).ln()], &[1, 2]).softmax(-1).unwrap();
    close(&s.to_vec().unwrap(), &[1.0 / 3.0, 2.0 / 3.0]);
    close(&a.transpose().unwrap().to_vec().unwrap(), &[1.0, 3.0, -2.0, 4.0]);
    close(
        &a.reshape(&[4]).unwrap().reverse(&[0]).unwrap().to_vec().unwrap(),
        &[4.0, 3.0, -2.0, 1.0],
    );
    close(&a.strided_slice(&[0, 1], &[2, 2], &[1, 1]).unwrap().to_vec().unwrap(), &[-2.0, 4.0]);
    close(
        &kb::concatenate(&[&a, &b], 0).unwrap().to_vec().unwrap(),
        &[1.0, -2.0, 3.0, 4.0, 0.5, 2.0, -1.0, 8.0],
    );
    close(
        &a.bias_add(&t(&[10.0, 20.0], &[2]), DataFormat::Default).unwrap().to_vec().unwrap(),
        &[11.0, 18.0, 13.0, 24.0],
    );
    assert_eq!(a.argmax(-1).unwrap().to_vec::<i64>().unwrap(), vec![0, 1]);
    assert_eq!(a.greater(&b).unwrap().to_vec::<bool>().unwrap(), vec![true, false, true, false]);
    let i = Tensor::from_slice(&[1i32, 2, 3], &[3]).unwrap();
    assert_eq!((&i * 2.0).to_vec::<i32>().unwrap(), vec![2, 4, 6]); // numbers take x's dtype
}

#[test]
fn errors_carry_the_status_and_the_c_message() {
    let a = t(&[1.0, 2.0, 3.0], &[3]);
    let e = a.reshape(&[2, 2]).unwrap_err();
    assert_eq!(e.status, Status::Shape);
    assert!(e.message.starts_with("reshape:"), "{}", e.message);
    let e = a.to_vec::<f64>().unwrap_err();
    assert_eq!(e.status, Status::DType);
    let e = Tensor::from_slice(&[1, 2], &[3]).unwrap_err();
    assert_eq!(e.status, Status::Shape);
    let e = "complex".parse::<DType>().unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.to_string().contains("complex"));
    let e = Tensor::from_slice(&[1i32, 2], &[2]).unwrap().softmax(-1).unwrap_err();
    assert_eq!(e.status, Status::DType);
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert!(boxed.to_string().starts_with("softmax"));
    // operators panic with the message
    let b = t(&[1.0, 2.0], &[2]);
    let r = std::panic::catch_unwind(|| &a + &b);
    let msg = r.unwrap_err();
    let msg = msg.downcast_ref::<String>().unwrap();
    assert!(msg.starts_with("kbackend: add"), "{msg}");
}

#[test]
fn thread_count_is_settable() {
    let before = kb::num_threads().unwrap();
    assert!(before >= 1);
    kb::set_num_threads(1).unwrap();
    assert_eq!(kb::num_threads().unwrap(), 1);
    let e = kb::set_num_threads(-1).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.starts_with("set_num_threads:"), "{}", e.message);
    kb::set_num_threads(0).unwrap();
    assert_eq!(kb::num_threads().unwrap(), before);
}

#[test]
fn clone_retains_and_drop_releases() {
    let a = t(&[1.0, 2.0], &[2]);
    let b = a.clone();
    assert_eq!(a.id().unwrap(), b.id().unwrap());
    drop(a);
    assert_eq!(b.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    let raw = b.clone().into_raw();
    let back = unsafe { Tensor::from_raw(raw) }.unwrap();
    assert_eq!(back.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    assert!(unsafe { Tensor::from_raw(std::ptr::null_mut()) }.is_none());
}

#[test]
fn function_updates_and_gradients_minimize_a_quadratic() {
    // loss = sum((w - target)^2); SGD with lr 0.25 halves the distance every step
    let w = kb::variable(&[0.0f32, 0.0], &[2], Some("w")).unwrap();
    let target = kb::placeholder(&[2], DType::F32, Some("target")).unwrap();
    let loss = (&w - &target).square().unwrap().sum(None, false).unwrap();
    let grads = kb::gradients(&loss, &[&w]).unwrap();
    assert_eq!(grads.len(), 1);
    let update = w.update_sub(&(&grads[0] * 0.25)).unwrap();
    let step = Function::new(&[&target], &[&loss], &[&update]).unwrap();
    let feed = t(&[4.0, -8.0], &[2]);
    let first = step.call(&[&feed]).unwrap();
    close(&first[0].to_vec().unwrap(), &[80.0]);
    for _ in 0..20 {
        step.call(&[&feed]).unwrap();
    }
    close(&w.to_vec().unwrap(), &[4.0, -8.0]);
    w.set_value(&[1.0f32, 1.0], &[2]).unwrap();
    close(&w.to_vec().unwrap(), &[1.0, 1.0]);
    assert!(matches!(step.device().unwrap(), kb::Device::Cpu | kb::Device::Cuda));
    let e = step.call(&[]).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
}

#[test]
fn closures_through_the_trampoline() {
    let e = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    let doubled = kb::map_fn(|x| Ok(x * 2.0), &e, None).unwrap();
    close(&doubled.to_vec().unwrap(), &[2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    let total = kb::foldl(|acc, x| Ok(acc + x), &e, None).unwrap();
    close(&total.to_vec().unwrap(), &[9.0, 12.0]);
    let zero = t(&[0.0, 0.0], &[2]);
    let r = kb::foldr(|acc, x| Ok(acc * 2.0 + x), &e, Some(&zero)).unwrap();
    close(&r.to_vec().unwrap(), &[1.0 + 2.0 * (3.0 + 2.0 * 5.0), 2.0 + 2.0 * (4.0 + 2.0 * 6.0)]);

    // rnn: s_t = s_{t-1} * c + x_t with a constant c
    let x = t(&[1.0, 2.0, 3.0], &[1, 3, 1]);
    let c = t(&[10.0], &[1]);
    let (last, outputs, states) = kb::rnn(
        |input, states| {
            assert_eq!(states.len(), 2);
            let s = &(&states[0] * &states[1]) + input;
            Ok((s.clone(), vec![s]))
        },
        &x,
        &[&t(&[0.0], &[1, 1])],
        false,
        None,
        &[&c],
        false,
    )
    .unwrap();
    close(&last.to_vec().unwrap(), &[123.0]);
    close(&outputs.to_vec().unwrap(), &[1.0, 12.0, 123.0]);
    assert_eq!(states.len(), 1);
}

#[test]
fn closure_errors_and_panics_come_back_as_errors() {
    let e = t(&[1.0, 2.0], &[2, 1]);
    let err =
        kb::map_fn(|_| Err(kb::Error::new(Status::Shape, "my own failure")), &e, None).unwrap_err();
    assert_eq!(err, kb::Error::new(Status::Shape, "my own failure"));
    let err =
        kb::map_fn(|_| -> kb::Result<Tensor> { panic!("boom in map_fn") }, &e, None).unwrap_err();
    assert_eq!(err.status, Status::Internal);
    assert!(err.message.contains("panicked: boom in map_fn"), "{}", err.message);
    let err = kb::rnn(
        |_, _| panic!("step exploded"),
        &t(&[1.0], &[1, 1, 1]),
        &[&t(&[0.0], &[1, 1])],
        false,
        None,
        &[],
        false,
    )
    .unwrap_err();
    assert!(err.message.contains("step exploded"), "{}", err.message);
    // the library still works afterwards
    close(&(&e + 1.0).to_vec().unwrap(), &[2.0, 3.0]);
}

#[test]
fn tensors_and_functions_cross_threads() {
    let x = kb::placeholder(&[-1, 2], DType::F32, None).unwrap();
    let f = std::sync::Arc::new(Function::new(&[&x], &[&(&x * 3.0)], &[]).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let (f, x) = (f.clone(), x.clone());
            std::thread::spawn(move || {
                let y = (&x + i as f64).square().unwrap(); // graph building in a thread
                assert_eq!(y.int_shape().unwrap(), Some(vec![None, Some(2)]));
                let out = f.call(&[&t(&[i as f32, 1.0], &[1, 2])]).unwrap();
                out[0].to_vec::<f32>().unwrap()
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().unwrap(), vec![3.0 * i as f32, 3.0]);
    }
}

#[test]
fn one_process_is_rank_zero_of_one_and_collectives_are_the_identity() {
    use kb::{dist, Reduce};
    assert_eq!(dist::rank().unwrap(), 0);
    assert_eq!(dist::size().unwrap(), 1);
    assert_eq!(dist::engine(), "");
    let x = kb::variable(&[1.0f32, -2.0, 3.0], &[3], None).unwrap();
    for y in [
        kb::all_reduce(&x, Reduce::Average).unwrap(),
        kb::broadcast(&x, 0).unwrap(),
        kb::all_gather(&x).unwrap(),
    ] {
        assert_eq!(y.eval().unwrap().to_vec::<f32>().unwrap(), vec![1.0, -2.0, 3.0]);
    }
    assert_eq!(dist::all_reduce(&[4i32, 5], Reduce::Sum).unwrap(), vec![4, 5]);
    dist::broadcast_variables(&[&x], 0).unwrap();
    dist::barrier().unwrap();
    let e = kb::broadcast(&x, 1).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("root 1 is not a rank"), "{}", e.message);
    assert_eq!(dist::set_timeout(0.0).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn devices_are_listed_and_chosen_by_name() {
    let devices = kb::list_devices().unwrap();
    assert_eq!(devices.len() as i64, 1 + kb::device_count(kb::Device::Cuda).unwrap());
    assert_eq!(devices[0].kind, kb::Device::Cpu);
    assert_eq!(devices[0].index, 0);
    assert!(!devices[0].name.is_empty());
    assert!(devices[0].memory > 1 << 26);
    let x = kb::placeholder(&[2], DType::F32, Some("x")).unwrap();
    let f = Function::new(&[&x], &[&(&x * 2.0)], &[]).unwrap();
    f.set_device_name("cpu").unwrap();
    assert_eq!(f.device_name().unwrap(), "cpu");
    assert_eq!(f.set_device_name("tpu").unwrap_err().status, Status::InvalidArgument);
    assert_eq!(f.set_device_name("cpu\0").unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn branches_as_closures() {
    use kbackend::backend::Training;
    let x = t(&[1.0, 2.0], &[2]);
    let alt = t(&[5.0, 6.0], &[2]);
    let (mut x_calls, mut alt_calls) = (0, 0);
    let r = kb::in_train_phase_fn(
        || {
            x_calls += 1;
            Ok(&x * 2.0)
        },
        || {
            alt_calls += 1;
            Ok(alt.clone())
        },
        None,
        Training::True,
    )
    .unwrap();
    close(&r.to_vec::<f32>().unwrap(), &[2.0, 4.0]);
    assert_eq!((x_calls, alt_calls), (1, 0)); // a fixed phase builds only the chosen branch
    let r = kb::in_test_phase_fn(|| Ok(x.clone()), || Ok(alt.clone()), None, Training::True);
    close(&r.unwrap().to_vec::<f32>().unwrap(), &[5.0, 6.0]);
    let c = kb::placeholder(&[], DType::F32, Some("c")).unwrap(); // a scalar condition
    let chosen = kb::switch_fn(&c, || Ok(&x * 2.0), || Ok(alt.clone())).unwrap();
    let f = Function::new(&[&c], &[&chosen], &[]).unwrap();
    close(&f.call(&[&t(&[1.0], &[])]).unwrap()[0].to_vec::<f32>().unwrap(), &[2.0, 4.0]);
    close(&f.call(&[&t(&[0.0], &[])]).unwrap()[0].to_vec::<f32>().unwrap(), &[5.0, 6.0]);
    let err = kb::switch_fn(&c, || Err(kb::Error::new(Status::Shape, "mine")), || Ok(alt.clone()))
        .unwrap_err();
    assert_eq!((err.status, err.message.as_str()), (Status::Shape, "mine"));
}

#[test]
fn call_into_and_batch_set_value() {
    let x = kb::placeholder(&[2], DType::F32, Some("x")).unwrap();
    let f = Function::new(&[&x], &[&(&x * 3.0)], &[]).unwrap();
    let out = f.call(&[&t(&[1.0, 2.0], &[2])]).unwrap();
    f.call_into(&[&t(&[5.0, 6.0], &[2])], &[&out[0]]).unwrap();
    close(&out[0].to_vec::<f32>().unwrap(), &[15.0, 18.0]);
    let a = kb::variable(&[0f32, 0.0], &[2], Some("a")).unwrap();
    let b = kb::variable(&[0f32], &[1], Some("b")).unwrap();
    kb::batch_set_value(&[&a, &b], &[&t(&[1.0, 2.0], &[2]), &t(&[3.0], &[1])]).unwrap();
    close(&a.to_vec::<f32>().unwrap(), &[1.0, 2.0]);
    close(&b.to_vec::<f32>().unwrap(), &[3.0]);
    assert!(kb::batch_set_value(&[&a], &[]).is_err());
    assert_eq!(kb::image_dim_ordering().unwrap(), kb::backend::DimOrdering::Tf);
}

#[test]
fn raw_data_forms() {
    // cast_to_floatx: to floatx's element type, which the caller names
    assert_eq!(kb::cast_to_floatx::<i32, f32>(&[1, -2]).unwrap(), vec![1.0f32, -2.0]);
    assert_eq!(kb::cast_to_floatx::<i32, f64>(&[1]).unwrap_err().status, Status::DType);
    // a variable's shape
    let v = kb::variable(&[0f32; 6], &[2, 3], Some("v")).unwrap();
    assert_eq!(v.variable_shape().unwrap(), vec![2, 3]);
    // [[1, 0, 2], [0, 0, 3]] as COO and as CSR
    let coo =
        kb::sparse_from_coo(&[0, 0, 0, 2, 1, 2], &[1f32, 2., 3.], &[2, 3], None, None).unwrap();
    close(
        &kb::backend::to_dense(&coo).unwrap().to_vec::<f32>().unwrap(),
        &[1., 0., 2., 0., 0., 3.],
    );
    let csr = kb::sparse_from_csr(&[0, 2, 3], &[0, 2, 2], &[1f32, 2., 3.], 3, None, None).unwrap();
    close(
        &kb::backend::to_dense(&csr).unwrap().to_vec::<f32>().unwrap(),
        &[1., 0., 2., 0., 0., 3.],
    );
    assert!(kb::sparse_from_coo(&[0, 0], &[1f32, 2.], &[2, 3], None, None).is_err());
    assert!(kb::sparse_from_csr(&[0, 2], &[0, 2, 2], &[1f32, 2., 3.], 3, None, None).is_err());
}

#[test]
fn print_tensor_through_a_closure() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let kept = seen.clone();
    kb::set_print_sink(Some(move |text: &str| kept.lock().unwrap().push_str(text))).unwrap();
    let x = kb::placeholder(&[2], DType::F32, Some("x")).unwrap();
    let p = kb::backend::print_tensor(&x, "x is ").unwrap();
    let f = Function::new(&[&x], &[&p], &[]).unwrap();
    f.call(&[&t(&[1.5, 2.0], &[2])]).unwrap();
    kb::set_print_sink(None::<fn(&str)>).unwrap();
    let text = seen.lock().unwrap().clone();
    assert!(text.contains("x is ") && text.contains("1.5"), "{text}");
}
