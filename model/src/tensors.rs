//! Tensor helpers of the forward pass: precisions as tensor kinds, legal masks as indices,
//! answers widened to f32, a network's `(logits, value)` pair, and libtorch's errors in a line.

use std::fmt;

use tch::{Device, IValue, Kind, Tensor};
use zertz_search::Precision;

/// The tensor kind of a precision (`auto` resolved before).
pub(crate) fn kind_of(precision: Precision) -> Kind {
    match precision {
        Precision::Bf16 => Kind::BFloat16,
        Precision::Fp16 => Kind::Half,
        Precision::Fp32 | Precision::Auto => Kind::Float,
    }
}

/// Writes the positions of the `true` entries of `masks` into `out` (as i32), in order, and
/// returns how many. Masks are mostly `false`: they are read eight at a time, and a word of
/// eight `false` is skipped whole.
pub(crate) fn legal_positions(masks: &[bool], out: &mut [i32]) -> usize {
    let mut k = 0;
    let mut base = 0;
    for chunk in masks.chunks(8) {
        let word = chunk.iter().fold(0u64, |w, &m| (w << 8) | u64::from(m));
        if word != 0 {
            for (j, &m) in chunk.iter().enumerate() {
                if m {
                    out[k] = (base + j) as i32;
                    k += 1;
                }
            }
        }
        base += chunk.len();
    }
    k
}

/// Widens the gathered numbers of `src` (a contiguous CPU tensor of fp32, bf16 or fp16) into
/// `dst` at the positions `indices` (a CPU tensor of i32 of the same length), and says where
/// the first NaN or infinity went, if any.
pub(crate) fn scatter_widen(
    src: &Tensor,
    indices: &Tensor,
    dst: &mut [f32],
) -> Result<Option<usize>, String> {
    let k = src.numel();
    if indices.numel() != k || indices.kind() != Kind::Int || !src.is_contiguous() {
        return Err(format!("{k} gathered answers for {} indices", indices.numel()));
    }
    if k == 0 {
        return Ok(None);
    }
    let n = dst.len();
    let mut bad = None;
    let mut put = |i: i32, x: f32| match dst.get_mut(i as usize) {
        Some(d) => {
            *d = x;
            if !x.is_finite() && bad.is_none() {
                bad = Some(i as usize);
            }
            Ok(())
        }
        None => Err(format!("index {i} past {n} answers")),
    };
    // SAFETY: contiguous CPU tensors of `k` elements of the kinds matched below, alive for the
    // call and not written meanwhile.
    #[allow(unsafe_code)]
    unsafe {
        let at = std::slice::from_raw_parts(indices.data_ptr().cast::<i32>(), k);
        let ptr = src.data_ptr();
        match src.kind() {
            Kind::Float => {
                let from = std::slice::from_raw_parts(ptr.cast::<f32>(), k);
                at.iter().zip(from).try_for_each(|(&i, &x)| put(i, x))
            }
            Kind::BFloat16 => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::bf16>(), k);
                at.iter().zip(from).try_for_each(|(&i, &x)| put(i, x.to_f32()))
            }
            Kind::Half => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::f16>(), k);
                at.iter().zip(from).try_for_each(|(&i, &x)| put(i, x.to_f32()))
            }
            other => Err(format!("answers of kind {other:?}")),
        }
    }?;
    Ok(bad)
}

/// Copies a contiguous CPU tensor of fp32, bf16 or fp16 numbers into `dst` as f32 (its length).
pub(crate) fn widen(src: &Tensor, dst: &mut [f32]) -> Result<(), String> {
    let n = dst.len();
    if src.device() != Device::Cpu || !src.is_contiguous() || src.numel() != n {
        return Err(format!("answers of {} numbers where {n} were expected", src.numel()));
    }
    if n == 0 {
        return Ok(());
    }
    let ptr = src.data_ptr();
    // SAFETY: a contiguous CPU tensor of `n` elements of the kind matched below, alive for the
    // whole call and not written meanwhile.
    #[allow(unsafe_code)]
    unsafe {
        match src.kind() {
            Kind::Float => dst.copy_from_slice(std::slice::from_raw_parts(ptr.cast::<f32>(), n)),
            Kind::BFloat16 => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::bf16>(), n);
                half::slice::HalfFloatSliceExt::convert_to_f32_slice(from, dst);
            }
            Kind::Half => {
                let from = std::slice::from_raw_parts(ptr.cast::<half::f16>(), n);
                half::slice::HalfFloatSliceExt::convert_to_f32_slice(from, dst);
            }
            other => return Err(format!("answers of kind {other:?}")),
        }
    }
    Ok(())
}

/// The `(logits, value)` pair a network's method returns.
pub(crate) fn pair(out: Result<IValue, tch::TchError>) -> Result<(Tensor, Tensor), String> {
    match out {
        Ok(IValue::Tuple(mut parts)) if parts.len() == 2 => {
            match (parts.remove(0), parts.remove(0)) {
                (IValue::Tensor(l), IValue::Tensor(v)) => Ok((l, v)),
                _ => Err("the outputs are not two tensors".to_string()),
            }
        }
        Ok(_) => Err("the output is not a (logits, value) pair".to_string()),
        Err(e) => Err(first_line(&e)),
    }
}

/// The line that says what went wrong in a libtorch error (they carry long backtraces): the
/// Python exception raised by TorchScript code when there is one, else the first line.
pub(crate) fn first_line(e: &impl fmt::Display) -> String {
    let text = e.to_string();
    let raised = text.lines().rev().find(|l| l.contains("Error: ")).map(str::trim);
    let line = raised.or_else(|| text.lines().find(|l| !l.trim().is_empty())).unwrap_or("").trim();
    line.strip_prefix("Internal torch error: ").unwrap_or(line).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_positions_are_found_in_order_whatever_the_words() {
        let mut rng = zertz_env::SplitMix64(3);
        for len in [0usize, 1, 7, 8, 9, 63, 64, 4441, 3 * 4441 + 5] {
            for density in [0u64, 1, 10, 50, 100] {
                let masks: Vec<bool> =
                    (0..len).map(|_| rng.below(100) < density as usize).collect();
                let mut out = vec![-1i32; len];
                let k = legal_positions(&masks, &mut out);
                let want: Vec<i32> =
                    masks.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i as i32).collect();
                assert_eq!(&out[..k], &want[..], "{len} {density}");
            }
        }
    }

    #[test]
    fn gathered_answers_are_widened_into_their_places() {
        let dense: Vec<f32> = (0..20).map(|i| i as f32 * 0.5 - 3.0).collect();
        let indices = [0i32, 3, 4, 19];
        for kind in [Kind::Float, Kind::BFloat16, Kind::Half] {
            let gathered: Vec<f32> = indices.iter().map(|&i| dense[i as usize]).collect();
            let src = Tensor::from_slice(&gathered).to_kind(kind);
            let at = Tensor::from_slice(&indices);
            let mut dst = vec![f32::NAN; 20];
            scatter_widen(&src, &at, &mut dst).unwrap();
            for (i, d) in dst.iter().enumerate() {
                if indices.contains(&(i as i32)) {
                    assert_eq!(*d, dense[i], "{kind:?} {i}");
                } else {
                    assert!(d.is_nan(), "{kind:?}: {i} was written");
                }
            }
            // An index past the answers is an error, not a write out of bounds.
            let e = scatter_widen(&src, &Tensor::from_slice(&[0i32, 3, 4, 20]), &mut dst);
            assert!(e.unwrap_err().contains("index 20 past 20"));
        }
        let mut dst = vec![0.0; 4];
        widen(&Tensor::from_slice(&[1.5f32, -2.0, 0.25, 8.0]).to_kind(Kind::BFloat16), &mut dst)
            .unwrap();
        assert_eq!(dst, [1.5, -2.0, 0.25, 8.0]);
        assert!(widen(&Tensor::from_slice(&[1i64, 2]), &mut [0.0; 2]).is_err());
        assert!(widen(&Tensor::from_slice(&[1.0f32]), &mut [0.0; 2]).is_err());
    }
}
