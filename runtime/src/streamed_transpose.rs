//! Streamed transpose tiles: a tile of a large transposed copy (`x.t().contiguous()`,
//! W7) written with non-temporal stores, which send each output line to memory
//! without reading it into the cache first.
//!
//! A transposed copy writes every output line whole, and reads nothing it writes.
//! Ordinary stores first fetch each line they write (a read for ownership), a third
//! of the copy's traffic, and fill the caches with output no one rereads soon;
//! streaming stores skip both. The code generator calls these only for outputs too
//! large for the caches (`lazyfuse_codegen`'s transposes); small ones keep their
//! register transposes, whose output the next kernel finds in the cache.
//!
//! `lf_transpose_stream_<4|8>(to, store_row, from, load_col, rows, cols)`: element
//! `(r, c)` of the tile, `rows × cols` elements of 4 or 8 bytes, moves from `from +
//! c·load_col + r·size` to `to + r·store_row + c·size` (strides in bytes): each
//! output row is contiguous, each input column too. Values move as bits.

/// Writes `chunk` to the 16-byte aligned `to` with a streaming store (a plain
/// one where the processor has none).
///
/// # Safety
/// `to` must be valid for a write of 16 bytes, 16-byte aligned.
#[inline(always)]
unsafe fn stream16(to: *mut u8, chunk: [u8; 16]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64; the caller's contract covers the address.
    unsafe {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_stream_si128};
        _mm_stream_si128(to.cast(), _mm_loadu_si128(chunk.as_ptr().cast()))
    };
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        to.cast::<[u8; 16]>().write(chunk)
    };
}

/// Orders the streaming stores before every store that follows.
#[inline(always)]
fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a fence has no operands; SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// One streamed tile function per element size (see the module doc).
macro_rules! stream_fn {
    ($name:ident, $t:ty) => {
        /// Copies the `rows × cols` tile (see the module doc) with streaming
        /// stores where each output row is 16-byte aligned and a whole number
        /// of 16-byte chunks long, ordinary stores elsewhere; returns after a
        /// store fence, so the streamed values are ordered before the stores
        /// that follow (the pool's completion included).
        ///
        /// # Safety
        /// Every element address of the tile, input and output, must lie in a
        /// live buffer of the element's type, aligned to it; the output
        /// addresses must not overlap the input ones, and no one else writes the
        /// output tile during the call (the JIT kernel passes a tile of its own
        /// output range and of an input it does not write).
        pub(crate) unsafe extern "C" fn $name(
            to: *mut u8,
            store_row: i64,
            from: *const u8,
            load_col: i64,
            rows: i64,
            cols: i64,
        ) {
            const SIZE: usize = std::mem::size_of::<$t>();
            const PER_CHUNK: usize = 16 / SIZE;
            let (rows, cols) = (rows.max(0) as usize, cols.max(0) as usize);
            let streams = cols * SIZE % 16 == 0 && store_row % 16 == 0;
            for r in 0..rows {
                // SAFETY: the caller's contract: the tile's output row `r`.
                let out = unsafe { to.offset(r as isize * store_row as isize) };
                let at = |c: usize| {
                    let off = c as isize * load_col as isize + (r * SIZE) as isize;
                    // SAFETY: the caller's contract: element (r, c) of the input.
                    unsafe { from.offset(off).cast::<$t>().read() }
                };
                if streams && (out as usize) % 16 == 0 {
                    for q in 0..cols / PER_CHUNK {
                        let chunk: [$t; PER_CHUNK] = std::array::from_fn(|e| at(q * PER_CHUNK + e));
                        // SAFETY: `out + 16q` is a 16-byte aligned chunk of the
                        // output row (checked above), inside the tile; the
                        // chunk is 16 bytes.
                        unsafe {
                            stream16(
                                out.add(q * 16),
                                std::mem::transmute::<[$t; PER_CHUNK], [u8; 16]>(chunk),
                            )
                        };
                    }
                    continue;
                }
                for c in 0..cols {
                    let v = at(c);
                    // SAFETY: element (r, c) of the output tile.
                    unsafe { out.add(c * SIZE).cast::<$t>().write(v) };
                }
            }
            fence();
        }
    };
}

stream_fn!(transpose_stream_4, u32);
stream_fn!(transpose_stream_8, u64);

/// The streamed transpose functions: symbol and address, for
/// [`crate::jit_symbols`].
pub(crate) fn symbols() -> [(&'static str, *const u8); 2] {
    [
        ("lf_transpose_stream_4", transpose_stream_4 as *const u8),
        ("lf_transpose_stream_8", transpose_stream_8 as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tiles of 4- and 8-byte elements, aligned (streamed) and not (ordinary
    /// stores), against the transpose element by element; nothing outside the
    /// tile is written.
    #[test]
    fn tiles_are_transposed() {
        let (n, rows, cols) = (64usize, 16usize, 8usize);
        let src32: Vec<u32> = (0..n * n).map(|i| i as u32 * 7 + 1).collect();
        let src64: Vec<u64> = (0..n * n).map(|i| i as u64 * 0x1_0000_0001).collect();
        for shift in [0usize, 1] {
            let mut dst32 = vec![0u32; n * n + 4];
            let mut dst64 = vec![0u64; n * n + 2];
            // the output from element `shift` on: 16-byte aligned or not
            let base32 = (16 - dst32.as_ptr() as usize % 16) % 16 / 4 + shift;
            let base64 = (16 - dst64.as_ptr() as usize % 16) % 16 / 8 + shift;
            // tile at input (row 3·cols.., col 2·rows..): out[i][j] = in[j][i]
            let (i0, j0) = (2 * rows, 3 * cols);
            // SAFETY: every address below lies in the live Vecs.
            unsafe {
                transpose_stream_4(
                    dst32.as_mut_ptr().add(base32 + i0 * n + j0).cast(),
                    (n * 4) as i64,
                    src32.as_ptr().add(j0 * n + i0).cast(),
                    (n * 4) as i64,
                    rows as i64,
                    cols as i64,
                );
                transpose_stream_8(
                    dst64.as_mut_ptr().add(base64 + i0 * n + j0).cast(),
                    (n * 8) as i64,
                    src64.as_ptr().add(j0 * n + i0).cast(),
                    (n * 8) as i64,
                    rows as i64,
                    cols as i64,
                );
            }
            for i in 0..n {
                for j in 0..n {
                    let inside = (i0..i0 + rows).contains(&i) && (j0..j0 + cols).contains(&j);
                    let (w32, w64) = if inside {
                        (src32[j * n + i], src64[j * n + i])
                    } else {
                        (0, 0)
                    };
                    assert_eq!(dst32[base32 + i * n + j], w32, "shift {shift} ({i}, {j})");
                    assert_eq!(dst64[base64 + i * n + j], w64, "shift {shift} ({i}, {j})");
                }
            }
        }
    }
}
