//! Tensor helpers of the forward pass: precisions as tensor kinds, legal masks as bits,
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

/// Packs `masks` into bits, eight entries a byte (entry `8i + j` is bit `j` of byte `i`), into
/// `out` (at least `masks.len().div_ceil(8)` bytes), and returns how many entries are `true`.
/// Eight entries are read as one word and gathered into their byte by one multiplication.
pub(crate) fn pack_masks(masks: &[bool], out: &mut [u8]) -> usize {
    let chunks = masks.chunks_exact(8);
    let rest = chunks.remainder();
    let mut k = 0;
    for (c, o) in chunks.zip(out.iter_mut()) {
        // Byte `j` of `x` is entry `j` (0 or 1); the product gathers bit `j` of the top byte
        // from byte `j` (no two partial products meet in it, so nothing carries into it).
        let x = u64::from_le_bytes(std::array::from_fn(|j| u8::from(c[j])));
        let byte = (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8;
        k += byte.count_ones() as usize;
        *o = byte;
    }
    if !rest.is_empty() {
        let byte = rest.iter().enumerate().fold(0u8, |b, (j, &m)| b | (u8::from(m) << j));
        k += byte.count_ones() as usize;
        out[masks.len() / 8] = byte;
    }
    k
}

/// Widens the numbers of `src` (a contiguous CPU tensor of fp32, bf16 or fp16: the entries of
/// `dst` whose bits are set in `bits`, in order, as [`pack_masks`] packs them) into their
/// places in `dst`, and says where the first NaN or infinity went, if any. The other entries
/// of `dst` are left as they were. An error (answers that are not one for each set bit, among
/// others) leaves `dst` of no use.
pub(crate) fn unpack_widen(
    src: &Tensor,
    bits: &[u8],
    dst: &mut [f32],
) -> Result<Option<usize>, String> {
    let k = src.numel();
    if !src.is_contiguous() || src.device() != Device::Cpu {
        return Err(format!("{k} selected answers that are not a contiguous CPU tensor"));
    }
    if bits.len() != dst.len().div_ceil(8)
        || (dst.len() % 8 != 0 && bits[bits.len() - 1] >> (dst.len() % 8) != 0)
    {
        return Err(format!("{} bytes of masks for {} answers", bits.len(), dst.len()));
    }
    /// Writes `from` at the set bits in order (NaN where it runs short), and returns where the
    /// first NaN or infinity went and how many bits are set.
    fn walk<T: Copy>(
        from: &[T],
        bits: &[u8],
        dst: &mut [f32],
        f32_of: impl Fn(T) -> f32,
    ) -> (Option<usize>, usize) {
        let mut bad = None;
        let mut next = from.iter();
        let mut set = 0;
        for (i, &byte) in bits.iter().enumerate() {
            let mut b = byte;
            while b != 0 {
                let at = 8 * i + b.trailing_zeros() as usize;
                b &= b - 1;
                set += 1;
                let x = next.next().map_or(f32::NAN, |&x| f32_of(x));
                dst[at] = x;
                if bad.is_none() && !x.is_finite() {
                    bad = Some(at);
                }
            }
        }
        (bad, set)
    }
    let ptr = src.data_ptr();
    // SAFETY: a contiguous CPU tensor of `k > 0` elements of the kind matched below, alive for
    // the call and not written meanwhile.
    #[allow(unsafe_code)]
    let (bad, set) = match (k, src.kind()) {
        (0, _) => walk::<f32>(&[], bits, dst, |x| x),
        (_, Kind::Float) => unsafe {
            walk(std::slice::from_raw_parts(ptr.cast::<f32>(), k), bits, dst, |x| x)
        },
        (_, Kind::BFloat16) => unsafe {
            let from = std::slice::from_raw_parts(ptr.cast::<half::bf16>(), k);
            walk(from, bits, dst, half::bf16::to_f32)
        },
        (_, Kind::Half) => unsafe {
            let from = std::slice::from_raw_parts(ptr.cast::<half::f16>(), k);
            walk(from, bits, dst, half::f16::to_f32)
        },
        (_, other) => return Err(format!("answers of kind {other:?}")),
    };
    // Counted as they are written, not in a pass of their own: answers that are not one for
    // each set bit are an error (the entries written meanwhile are of no use).
    if set != k {
        return Err(format!("{k} selected answers for {set} legal actions"));
    }
    Ok(bad)
}

/// The entries of `dense` whose masks are set, in order, into `legal` (which holds as many as
/// the masks have set): what [`Answers::Compact`](crate::Answers::Compact) answers.
pub(crate) fn gather_legal(dense: &[f32], masks: &[bool], legal: &mut [f32]) -> Result<(), String> {
    let mut out = legal.iter_mut();
    let mut set = 0;
    for (&l, _) in dense.iter().zip(masks).filter(|(_, m)| **m) {
        set += 1;
        if let Some(slot) = out.next() {
            *slot = l;
        }
    }
    match set == legal.len() {
        true => Ok(()),
        false => {
            Err(format!("room for {} legal logits where {set} actions are legal", legal.len()))
        }
    }
}

/// The index of the `n`-th set bit (from 0) of masks packed as [`pack_masks`] packs them (the
/// flat index of the `n`-th legal action); past the last, the number of bits.
pub(crate) fn nth_set_bit(bits: &[u8], n: usize) -> usize {
    let mut left = n;
    for (i, &byte) in bits.iter().enumerate() {
        let ones = byte.count_ones() as usize;
        if left < ones {
            let mut b = byte;
            for _ in 0..left {
                b &= b - 1;
            }
            return 8 * i + b.trailing_zeros() as usize;
        }
        left -= ones;
    }
    8 * bits.len()
}

/// The entries of `flat` (one dimension, on any device) whose bits are set in `bits` (a u8
/// tensor on the same device, packed as [`pack_masks`] packs them), in order: the masks are
/// unpacked and the entries selected where `flat` is, and only those cross back.
pub(crate) fn select_packed(flat: &Tensor, bits: &Tensor) -> Result<Tensor, String> {
    let n = flat.numel() as i64;
    let shifts = Tensor::arange(8, (Kind::Uint8, bits.device()));
    let mask = bits
        .unsqueeze(1)
        .f_bitwise_right_shift(&shifts)
        .and_then(|t| t.f_bitwise_and(1))
        .and_then(|t| t.f_reshape([-1]))
        .and_then(|t| t.f_narrow(0, 0, n))
        .and_then(|t| t.f_to_kind(Kind::Bool))
        .map_err(|e| first_line(&e))?;
    flat.f_masked_select(&mask).map_err(|e| first_line(&e))
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
    fn masks_are_packed_selected_and_widened_back_into_their_places() {
        let mut rng = zertz_env::SplitMix64(3);
        for len in [0usize, 1, 7, 8, 9, 63, 64, 4441, 3 * 4441 + 5] {
            for density in [0u64, 1, 10, 50, 100] {
                let masks: Vec<bool> =
                    (0..len).map(|_| rng.below(100) < density as usize).collect();
                let mut bits = vec![0xAAu8; len.div_ceil(8)];
                let k = pack_masks(&masks, &mut bits);
                assert_eq!(k, masks.iter().filter(|&&m| m).count(), "{len} {density}");
                for (i, &m) in masks.iter().enumerate() {
                    assert_eq!(bits[i / 8] >> (i % 8) & 1 == 1, m, "{len} {density} {i}");
                }
                // Selected as on a device (here the CPU), widened back in every number format.
                let dense: Vec<f32> = (0..len).map(|i| (i % 97) as f32 * 0.25 - 5.0).collect();
                let on = Tensor::from_slice(&bits);
                for kind in [Kind::Float, Kind::BFloat16, Kind::Half] {
                    let flat = Tensor::from_slice(&dense).to_kind(kind);
                    let picked = select_packed(&flat, &on).unwrap();
                    assert_eq!(picked.numel(), k);
                    // Compact: widened as they come, the n-th at the n-th set bit.
                    let mut compact = vec![f32::NAN; k];
                    widen(&picked, &mut compact).unwrap();
                    let mut gathered = vec![f32::NAN; k];
                    gather_legal(&dense, &masks, &mut gathered).unwrap();
                    assert_eq!(compact, gathered, "{kind:?} {len} {density}");
                    for (n, &c) in compact.iter().enumerate() {
                        assert_eq!(c, dense[nth_set_bit(&bits, n)], "{kind:?} {len} {n}");
                    }
                    assert_eq!(nth_set_bit(&bits, k), 8 * bits.len());
                    let mut dst = vec![f32::NAN; len];
                    assert_eq!(unpack_widen(&picked, &bits, &mut dst).unwrap(), None);
                    for (i, d) in dst.iter().enumerate() {
                        match masks[i] {
                            true => assert_eq!(*d, dense[i], "{kind:?} {len} {i}"),
                            false => assert!(d.is_nan(), "{kind:?}: {i} was written"),
                        }
                    }
                }
            }
        }
        // The first NaN or infinity is named by its place; counts that disagree are errors.
        let bits = [0b1010_0110u8];
        let picked = Tensor::from_slice(&[1.0f32, f32::INFINITY, 2.0, f32::NAN]);
        let mut dst = [0.0f32; 8];
        assert_eq!(unpack_widen(&picked, &bits, &mut dst).unwrap(), Some(2));
        assert_eq!(dst[..7], [0.0, 1.0, f32::INFINITY, 0.0, 0.0, 2.0, 0.0]);
        assert!(dst[7].is_nan());
        let e = unpack_widen(&Tensor::from_slice(&[1.0f32; 3]), &bits, &mut dst).unwrap_err();
        assert!(e.contains("3 selected answers for 4 legal actions"), "{e}");
        let e = unpack_widen(&picked, &bits, &mut [0.0f32; 9]).unwrap_err();
        assert!(e.contains("1 bytes of masks for 9 answers"), "{e}");
        // A bit past the answers is refused, not written out of bounds.
        let e = unpack_widen(&picked, &bits, &mut [0.0f32; 6]).unwrap_err();
        assert!(e.contains("1 bytes of masks for 6 answers"), "{e}");
    }

    #[test]
    fn gathering_needs_room_for_every_legal_logit() {
        let e = gather_legal(&[1.0, 2.0, 3.0], &[true, false, true], &mut [0.0]).unwrap_err();
        assert!(e.contains("room for 1 legal logits where 2 actions are legal"), "{e}");
        let mut legal = [0.0; 2];
        gather_legal(&[1.0, 2.0, 3.0], &[true, false, true], &mut legal).unwrap();
        assert_eq!(legal, [1.0, 3.0]);
    }

    #[test]
    fn answers_are_widened() {
        let mut dst = vec![0.0; 4];
        widen(&Tensor::from_slice(&[1.5f32, -2.0, 0.25, 8.0]).to_kind(Kind::BFloat16), &mut dst)
            .unwrap();
        assert_eq!(dst, [1.5, -2.0, 0.25, 8.0]);
        assert!(widen(&Tensor::from_slice(&[1i64, 2]), &mut [0.0; 2]).is_err());
        assert!(widen(&Tensor::from_slice(&[1.0f32]), &mut [0.0; 2]).is_err());
    }
}
