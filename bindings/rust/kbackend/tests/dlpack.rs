//! DLPack round trips through the C ABI: a value lent and taken back without a copy, both
//! structs, ownership passing on success only.
use kbackend::backend::DlpackCopy;
use kbackend::dlpack::DLPack;
use kbackend::{Status, Tensor};

#[test]
fn dlpack_round_trips() -> kbackend::Result<()> {
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    for versioned in [true, false] {
        let mut d = if versioned {
            x.to_dlpack(DlpackCopy::Never)?
        } else {
            x.to_dlpack_unversioned(DlpackCopy::Never)?
        };
        assert!(!d.as_ptr().is_null());
        assert_eq!(d.versioned(), versioned);
        let y = Tensor::from_dlpack(&mut d, DlpackCopy::Never)?;
        assert!(d.as_ptr().is_null(), "taken, the managed tensor is still the program's");
        assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
        // Taken, it cannot be taken again: the library refuses the NULL.
        let e = Tensor::from_dlpack(&mut d, DlpackCopy::Never).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
    }
    // A copy handed on as a raw pointer and taken back, then dropped (its deleter runs).
    let raw = x.to_dlpack(DlpackCopy::Always)?.into_raw();
    let mut again = unsafe { DLPack::from_raw(raw, true) };
    let z = Tensor::from_dlpack(&mut again, DlpackCopy::IfNeeded)?;
    assert_eq!(z.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
    drop(x.to_dlpack(DlpackCopy::Always)?);
    Ok(())
}
