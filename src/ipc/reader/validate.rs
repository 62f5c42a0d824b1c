//! The checks of string and binary columns that the flat reader (`flat.rs`) runs instead
//! of arrow's full validation, which goes one offset at a time through a chain of iterator
//! adapters: that took 40% of the decode time of an 8192-row batch in wasm. These refuse
//! exactly what arrow refuses (tests/string_validation.rs), in two tight passes.

use arrow_array::OffsetSizeTrait;

use crate::ipc::error::{QuiverError, Result};

/// Offsets start at 0 or later, never decrease and end within the data: then every string
/// lies inside the data.
pub(crate) fn check_offsets<O: Offset>(offsets: &[O], data_len: usize) -> Result<()> {
    let (Some(first), Some(last)) = (offsets.first(), offsets.last()) else {
        return Ok(());
    };
    let decreasing = O::any_decreasing(offsets);
    let in_bounds =
        first.to_usize().is_some() && last.to_usize().is_some_and(|end| end <= data_len);
    if decreasing {
        // The error path only: find where.
        let at = offsets
            .windows(2)
            .position(|pair| pair[1] < pair[0])
            .unwrap_or(0);
        return Err(QuiverError::invalid(format!(
            "offset {} ({:?}) is less than offset {at} ({:?}), expected non-decreasing offsets",
            at + 1,
            offsets[at + 1],
            offsets[at]
        )));
    }
    if !in_bounds {
        return Err(QuiverError::invalid(format!(
            "offsets run from {first:?} to {last:?}, expected 0 <= offset <= {data_len} \
             (the data's length)"
        )));
    }
    Ok(())
}

/// The bytes that checked offsets span are valid UTF-8, and each offset is on a character
/// boundary. ASCII data, the common case, needs no boundary pass.
pub(crate) fn check_utf8<O: Offset>(offsets: &[O], data: &[u8]) -> Result<()> {
    let (Some(first), Some(last)) = (offsets.first(), offsets.last()) else {
        return Ok(());
    };
    let (first, last) = (first.as_usize(), last.as_usize());
    let span = &data[first..last];
    if is_ascii(span) {
        return Ok(());
    }
    let text = std::str::from_utf8(span).map_err(|e| {
        let byte = first + e.valid_up_to();
        let string = offsets
            .partition_point(|o| o.as_usize() <= byte)
            .saturating_sub(1);
        QuiverError::invalid(format!(
            "string {string} is not valid UTF-8 (at byte {byte} of the string data)"
        ))
    })?;
    match offsets
        .iter()
        .position(|o| !text.is_char_boundary(o.as_usize() - first))
    {
        Some(index) => Err(QuiverError::invalid(format!(
            "string offset {index} ({:?}) splits a UTF-8 character",
            offsets[index]
        ))),
        None => Ok(()),
    }
}

/// The two passes over every string column, `any_decreasing` and `is_ascii`, are the
/// decoder's hot loops after the copy. The wasm build enables SIMD (`.cargo/config.toml`),
/// and these use it directly: LLVM does not vectorise loops at the size-optimising
/// `opt-level = "s"` that keeps the package small. Each step does four independent
/// 16-byte loads: a profile of 2000-row batches in Chromium took the two passes from
/// 1.8 µs to 0.9 µs a batch that way, against one load a step.
pub(crate) trait Offset: OffsetSizeTrait {
    /// Whether some offset is less than the one before it.
    fn any_decreasing(offsets: &[Self]) -> bool {
        // No early exit, so the loop has no data-dependent branch.
        offsets
            .iter()
            .zip(offsets.iter().skip(1))
            .fold(false, |found, (a, b)| found | (b < a))
    }
}

impl Offset for i64 {}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
impl Offset for i32 {}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn is_ascii(bytes: &[u8]) -> bool {
    bytes.is_ascii()
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl Offset for i32 {
    fn any_decreasing(offsets: &[i32]) -> bool {
        use core::arch::wasm32::{i32x4_lt, i32x4_shuffle, i32x4_splat, v128_any_true, v128_or};
        let Some((&first, rest)) = offsets.split_first() else {
            return false;
        };
        // Sixteen offsets a step. Each vector of four is compared with its predecessors:
        // itself shifted by one lane, the last offset of the vector before shuffled in.
        // So every offset is loaded once, and the four comparisons are independent.
        let (vectors, _) = rest.as_chunks::<4>();
        let (blocks, _) = vectors.as_chunks::<4>();
        let mut previous = i32x4_splat(first);
        let mut found = i32x4_splat(0);
        for [a, b, c, d] in blocks {
            let (a, b, c, d) = (simd::load(a), simd::load(b), simd::load(c), simd::load(d));
            let before = |earlier, later| i32x4_shuffle::<3, 4, 5, 6>(earlier, later);
            found = v128_or(
                found,
                v128_or(
                    v128_or(i32x4_lt(a, before(previous, a)), i32x4_lt(b, before(a, b))),
                    v128_or(i32x4_lt(c, before(b, c)), i32x4_lt(d, before(c, d))),
                ),
            );
            previous = d;
        }
        // The rest pairwise, from the last offset compared above.
        let checked = 1 + blocks.len() * 16;
        v128_any_true(found)
            || offsets[checked - 1..]
                .windows(2)
                .any(|pair| pair[1] < pair[0])
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn is_ascii(bytes: &[u8]) -> bool {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_splat, v128_or};
    // 64 bytes a step in four independent loads, then 16 at a time, then single bytes.
    let (chunks, tail) = bytes.as_chunks::<16>();
    let (blocks, rest) = chunks.as_chunks::<4>();
    let mut high = u8x16_splat(0);
    for [a, b, c, d] in blocks {
        let (a, b, c, d) = (simd::load(a), simd::load(b), simd::load(c), simd::load(d));
        high = v128_or(high, v128_or(v128_or(a, b), v128_or(c, d)));
    }
    for chunk in rest {
        high = v128_or(high, simd::load(chunk));
    }
    u8x16_bitmask(high) == 0 && tail.is_ascii()
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::{v128, v128_load};

    /// The 16 bytes of `lanes` as one vector.
    pub(super) fn load<T: Copy, const N: usize>(lanes: &[T; N]) -> v128 {
        const { assert!(N * std::mem::size_of::<T>() == 16) };
        // SAFETY: `lanes` is 16 bytes long (asserted when compiled); v128_load needs no
        // alignment.
        unsafe { v128_load(lanes.as_ptr().cast::<v128>()) }
    }
}
