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

use std::sync::atomic::{AtomicU8, Ordering};

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

/// Whether streaming stores of 16-byte pieces pay where an output line is only
/// 16-byte aligned: 0 not yet probed, 1 no, 2 yes.
///
/// Large buffers from the system allocator start 16 bytes past a 64-byte line, so
/// a tile of sixteen four-byte columns covers no output line whole: each line is
/// written in streamed pieces by two tiles, one tile's rows apart in time. Such
/// partly filled write-combining buffers cost AMD family 19h processors (Zen 3,
/// Zen 4) more than the read for ownership they save (measured: streamed
/// transposes there ran well behind plain stores), while a family 1Ah processor
/// (Zen 5) gained from them. Whole aligned lines stream everywhere.
static PARTIAL_LINES: AtomicU8 = AtomicU8::new(0);

/// Whether lines only 16-byte aligned are streamed in pieces (see
/// [`PARTIAL_LINES`]).
fn partial_line_streams() -> bool {
    match PARTIAL_LINES.load(Ordering::Relaxed) {
        0 => {
            let on = probe_partial_lines();
            PARTIAL_LINES.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        v => v == 2,
    }
}

#[cfg(target_arch = "x86_64")]
fn probe_partial_lines() -> bool {
    use std::arch::x86_64::__cpuid;
    let vendor = __cpuid(0);
    // "AuthenticAMD" in ebx, edx, ecx
    let amd = (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163);
    let eax = __cpuid(1).eax;
    let base = (eax >> 8) & 0xf;
    let family = base + if base == 0xf { (eax >> 20) & 0xff } else { 0 };
    !(amd && family == 0x19)
}

#[cfg(not(target_arch = "x86_64"))]
fn probe_partial_lines() -> bool {
    false
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
    ($name:ident, $t:ty, $block:expr, $wide:ident) => {
        /// Copies the `rows × cols` tile (see the module doc) with streaming
        /// stores where each output row is 16-byte aligned and a whole number
        /// of 16-byte chunks long, ordinary stores elsewhere (with AVX-512 and
        /// both sides a multiple of the register block: blocks transposed in
        /// registers, see `wide`); returns after a store fence, so the streamed values are ordered before the stores
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
            #[cfg(target_arch = "x86_64")]
            let partial = partial_line_streams();
            if rows.is_multiple_of($block)
                && cols.is_multiple_of($block)
                && crate::vector_runs::level() == 3
            {
                // SAFETY: level 3 means AVX-512F; the caller's contract covers
                // every element of the tile, which the blocks tile exactly.
                unsafe { wide::$wide(to, store_row, from, load_col, rows, cols, partial) };
                fence();
                return;
            }
            let streams = cols * SIZE % 16 == 0 && store_row % 16 == 0 && partial;
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

#[cfg(target_arch = "x86_64")]
mod wide {
    //! AVX-512 tiles: square blocks (16 × 16 four-byte elements, 8 × 8
    //! eight-byte ones) read as one 64-byte load per input column, transposed
    //! in registers by unpacks and 128-bit lane shuffles, and written as one
    //! 64-byte line per output row: a streaming store where the line is
    //! 64-byte aligned, four 16-byte streaming stores where it is 16-byte
    //! aligned (large buffers from the system allocator are: 16 past a
    //! boundary) and the processor gains from them (`PARTIAL_LINES`), a
    //! plain store elsewhere. A tile two or more blocks wide shifts its
    //! blocks onto the lines instead (see `tile_fn!`). The scalar tile reads
    //! one element per load; a block reads sixteen (or eight).
    use std::arch::x86_64::*;

    /// Writes the 64-byte `v` at `o`, streamed as its alignment allows (in
    /// 16-byte pieces only where `partial`, see `PARTIAL_LINES`).
    ///
    /// # Safety
    /// `o` must be valid for a write of 64 bytes.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn store_line(o: *mut u8, v: __m512i, partial: bool) {
        // SAFETY: the caller's contract; each store's alignment is checked
        // where it needs one.
        unsafe {
            if (o as usize).is_multiple_of(64) {
                _mm512_stream_si512(o.cast(), v);
            } else if partial && (o as usize).is_multiple_of(16) {
                _mm_stream_si128(o.cast(), _mm512_extracti32x4_epi32::<0>(v));
                _mm_stream_si128(o.add(16).cast(), _mm512_extracti32x4_epi32::<1>(v));
                _mm_stream_si128(o.add(32).cast(), _mm512_extracti32x4_epi32::<2>(v));
                _mm_stream_si128(o.add(48).cast(), _mm512_extracti32x4_epi32::<3>(v));
            } else {
                _mm512_storeu_si512(o.cast(), v);
            }
        }
    }

    /// The last two steps of both transposes: four vectors whose 128-bit
    /// lanes form a 4 × 4 grid, transposed (`a` row `m` lane `l` becomes
    /// row `l` lane `m`).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn lanes4(a: [__m512d; 4]) -> [__m512d; 4] {
        let b0 = _mm512_shuffle_f64x2::<0x88>(a[0], a[1]);
        let b1 = _mm512_shuffle_f64x2::<0xdd>(a[0], a[1]);
        let b2 = _mm512_shuffle_f64x2::<0x88>(a[2], a[3]);
        let b3 = _mm512_shuffle_f64x2::<0xdd>(a[2], a[3]);
        [
            _mm512_shuffle_f64x2::<0x88>(b0, b2),
            _mm512_shuffle_f64x2::<0x88>(b1, b3),
            _mm512_shuffle_f64x2::<0xdd>(b0, b2),
            _mm512_shuffle_f64x2::<0xdd>(b1, b3),
        ]
    }

    /// A 16 × 16 block of four-byte values (`r[k]` lane `m` becomes `out[m]`
    /// lane `k`): pairs of rows interleaved by four-byte and then eight-byte
    /// unpacks (4 × 4 blocks transposed inside each 128-bit lane), then the
    /// lanes' grid transposed.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn block16(r: [__m512; 16]) -> [__m512i; 16] {
        let t: [__m512d; 16] = std::array::from_fn(|k| {
            let (a, b) = (r[k & !1], r[k | 1]);
            _mm512_castps_pd(if k % 2 == 0 {
                _mm512_unpacklo_ps(a, b)
            } else {
                _mm512_unpackhi_ps(a, b)
            })
        });
        // u[4q + m]: rows 4q..4q + 4, in lane l columns 4l + m.
        let u: [__m512d; 16] = std::array::from_fn(|k| {
            let (q, m) = (k / 4, k % 4);
            let (a, c) = (t[4 * q + m / 2], t[4 * q + 2 + m / 2]);
            if m % 2 == 0 {
                _mm512_unpacklo_pd(a, c)
            } else {
                _mm512_unpackhi_pd(a, c)
            }
        });
        let mut out = [_mm512_setzero_si512(); 16];
        for m in 0..4 {
            let rows = lanes4([u[m], u[4 + m], u[8 + m], u[12 + m]]);
            for (l, v) in rows.into_iter().enumerate() {
                out[4 * l + m] = _mm512_castpd_si512(v);
            }
        }
        out
    }

    /// An 8 × 8 block of eight-byte values: pairs of rows unpacked (2 × 2
    /// blocks inside each lane), then each parity's lane grid transposed.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn block8(r: [__m512d; 8]) -> [__m512i; 8] {
        let t: [__m512d; 8] = std::array::from_fn(|k| {
            let (a, b) = (r[k & !1], r[k | 1]);
            if k % 2 == 0 {
                _mm512_unpacklo_pd(a, b)
            } else {
                _mm512_unpackhi_pd(a, b)
            }
        });
        let mut out = [_mm512_setzero_si512(); 8];
        for p in 0..2 {
            let rows = lanes4([t[p], t[2 + p], t[4 + p], t[6 + p]]);
            for (m, v) in rows.into_iter().enumerate() {
                out[2 * m + p] = _mm512_castpd_si512(v);
            }
        }
        out
    }

    /// One tile function per element size: the tile in blocks, column
    /// blocks outside (each block reads its columns' next 64 bytes).
    ///
    /// Where the output rows start inside a line (large buffers from the
    /// system allocator start 16 bytes past one) and the tile is at least two
    /// blocks wide, the column blocks are shifted onto the lines: the first
    /// `head` columns and the last `SIDE - head` are each one narrow block
    /// (its missing columns zero, its stores masked to the tile's own
    /// lanes), and every block between writes whole 64-byte aligned lines,
    /// each streamed.
    macro_rules! tile_fn {
        ($name:ident, $side:expr, $load:ident, $zero:ident, $block:ident, $masked:ident, $mask:ty) => {
            /// The tile of the module doc of `rows × cols` elements, both
            /// multiples of the block side.
            ///
            /// # Safety
            /// The caller's contract of the streamed functions; AVX-512F.
            #[target_feature(enable = "avx512f")]
            pub(super) unsafe fn $name(
                to: *mut u8,
                store_row: i64,
                from: *const u8,
                load_col: i64,
                rows: usize,
                cols: usize,
                partial: bool,
            ) {
                const SIDE: usize = $side;
                const SIZE: usize = 64 / SIDE;
                let into_line = to as usize % 64;
                let shifted = into_line != 0
                    && into_line % SIZE == 0
                    && store_row % 64 == 0
                    && cols >= 2 * SIDE;
                // The tile's columns `c..c + n` as lanes `lane..lane + n` of
                // blocks (the other lanes zero), stored masked to those lanes
                // where `n < SIDE`, as whole lines otherwise.
                let blocks = |c: usize, n: usize, lane: usize| {
                    for r in (0..rows).step_by(SIDE) {
                        let v = std::array::from_fn(|k| {
                            if k < lane || k >= lane + n {
                                return $zero();
                            }
                            let at =
                                (c + k - lane) as isize * load_col as isize + (r * SIZE) as isize;
                            // SAFETY: element (r, c + k - lane) of the tile's
                            // input and the 64 contiguous bytes from it.
                            unsafe { $load(from.offset(at).cast()) }
                        });
                        for (m, line) in $block(v).into_iter().enumerate() {
                            let at = (r + m) as isize * store_row as isize
                                + c as isize * SIZE as isize
                                - (lane * SIZE) as isize;
                            let o = to.wrapping_offset(at);
                            if n == SIDE {
                                // SAFETY: elements (r + m, c..c + SIDE) of the
                                // tile's output, 64 contiguous bytes.
                                unsafe { store_line(o, line, partial) };
                            } else {
                                let mask = ((1 << n) - 1) << lane;
                                // SAFETY: the mask's lanes are elements (r + m,
                                // c..c + n) of the tile's output; a masked
                                // store neither writes nor faults on the
                                // others (which may lie before the buffer).
                                unsafe { $masked(o.cast(), mask as $mask, line) };
                            }
                        }
                    }
                };
                if shifted {
                    let head = (64 - into_line) / SIZE;
                    blocks(0, head, SIDE - head);
                    for c in (head..cols - SIDE).step_by(SIDE) {
                        blocks(c, SIDE, 0);
                    }
                    blocks(cols - SIDE + head, SIDE - head, 0);
                } else {
                    for c in (0..cols).step_by(SIDE) {
                        blocks(c, SIDE, 0);
                    }
                }
            }
        };
    }

    tile_fn!(
        tile16,
        16,
        _mm512_loadu_ps,
        _mm512_setzero_ps,
        block16,
        _mm512_mask_storeu_epi32,
        u16
    );
    tile_fn!(
        tile8,
        8,
        _mm512_loadu_pd,
        _mm512_setzero_pd,
        block8,
        _mm512_mask_storeu_epi64,
        u8
    );
}

stream_fn!(transpose_stream_4, u32, 16, tile16);
stream_fn!(transpose_stream_8, u64, 8, tile8);

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

    /// Tiles of 4- and 8-byte elements against the transpose element by
    /// element, at every level this processor has, with lines only 16-byte
    /// aligned streamed in pieces and not: shapes that the register blocks
    /// tile and shapes they do not, outputs 64-byte aligned, 16-byte aligned
    /// and unaligned (tiles two or more blocks wide shifted onto the lines,
    /// their first and last columns masked); nothing outside the tile is
    /// written.
    #[test]
    fn tiles_are_transposed() {
        for partial in [1, 2] {
            PARTIAL_LINES.store(partial, Ordering::Relaxed);
            crate::vector_runs::each_level(tiles_at_this_level);
        }
        PARTIAL_LINES.store(0, Ordering::Relaxed);
    }

    /// One level's part of [`tiles_are_transposed`].
    fn tiles_at_this_level() {
        let n = 64usize;
        let src32: Vec<u32> = (0..n * n).map(|i| i as u32 * 7 + 1).collect();
        let src64: Vec<u64> = (0..n * n).map(|i| i as u64 * 0x1_0000_0001).collect();
        for (rows, cols) in [
            (16usize, 8usize),
            (32, 16),
            (48, 32),
            (8, 24),
            (16, 64),
            (32, 48),
        ] {
            for shift in [0usize, 1, 2, 4] {
                let mut dst32 = vec![0u32; n * n + 32];
                let mut dst64 = vec![0u64; n * n + 16];
                // the output from element `shift` past a 64-byte boundary
                let base32 = (64 - dst32.as_ptr() as usize % 64) % 64 / 4 + shift;
                let base64 = (64 - dst64.as_ptr() as usize % 64) % 64 / 8 + shift;
                // a tile inside the matrix: out[i][j] = in[j][i]
                let (i0, j0) = ((n - rows).min(2 * rows), (n - cols).min(3 * cols));
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
                        let at = format!("{rows}x{cols} shift {shift} ({i}, {j})");
                        assert_eq!(dst32[base32 + i * n + j], w32, "{at}");
                        assert_eq!(dst64[base64 + i * n + j], w64, "{at}");
                    }
                }
                let untouched = |v: &[u64]| v.iter().all(|&x| x == 0);
                assert!(untouched(&dst64[..base64]) && untouched(&dst64[base64 + n * n..]));
                let untouched = |v: &[u32]| v.iter().all(|&x| x == 0);
                assert!(untouched(&dst32[..base32]) && untouched(&dst32[base32 + n * n..]));
            }
        }
    }
}
