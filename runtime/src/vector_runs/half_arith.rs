//! The processor's float16 arithmetic (AVX512-FP16: `vaddph`, `vsubph`,
//! `vmulph`, `vdivph` on 32 lanes), where it has it, for the code tiles'
//! binary ops (`code_tiles.rs`).
//!
//! A float16 operation rounded once gives the bits of the float32 operation
//! rounded to float16, which is how lazyfuse (and PyTorch) computes a float16
//! op: float32's 24 bits are at least `2p + 2` for float16's `p = 11`, so its
//! rounding of a sum, difference, product or quotient of two float16 values
//! never moves the second rounding (the double rounding is innocuous). The
//! rest agrees too: the rounding is to nearest even in both (the default
//! MXCSR, which Rust keeps, without flush-to-zero), subnormals and infinities
//! are float16's own, a NaN operand comes back quieted with its payload (the
//! first operand's where both are NaN, as `vaddps` keeps it), and an invalid
//! operation gives the default NaN, whose float16 code is float32's rounded.
//!
//! Rust has no stable float16 intrinsics, so each op is one instruction in
//! `asm!` over registers.

/// The binary ops the processor computes in float16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HalfOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b`
    Div,
}

/// Whether the float16 ops run as the processor's float16 instructions: at the
/// AVX-512 level on a processor with AVX512-FP16.
fn float16_arithmetic() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        super::level() == 3 && std::arch::is_x86_feature_detected!("avx512fp16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `dst[i] = a[i] op b[i]` on float16 codes for the whole vectors of 32
/// codes, asking for the lines ahead of the runs `hints`
/// (`prefetch::ahead_all`); returns how many points it wrote (a
/// multiple of 32: the caller computes the rest), 0 where not
/// [`float16_arithmetic`].
pub(super) fn binary(
    op: HalfOp,
    dst: &mut [u16],
    a: &[u16],
    b: &[u16],
    hints: &[*const u16],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if float16_arithmetic() {
        // SAFETY: `float16_arithmetic` says the processor has AVX-512F and
        // AVX512-FP16.
        return unsafe { native::binary(op, dst, a, b, hints) };
    }
    let _ = (op, dst, a, b, hints);
    0
}

#[cfg(target_arch = "x86_64")]
mod native {
    use super::HalfOp;
    use std::arch::x86_64::*;

    /// One AVX512-FP16 instruction `$op` on the 32 float16 lanes of `$a` and
    /// `$b`: `$a op $b`.
    macro_rules! ph {
        ($op:literal, $a:expr, $b:expr) => {{
            let r: __m512i;
            // SAFETY: one register-to-register float16 operation; the
            // enclosing function runs only where the processor has
            // AVX512-FP16 (`binary`'s contract).
            unsafe {
                std::arch::asm!(
                    concat!($op, " {r}, {a}, {b}"),
                    r = lateout(zmm_reg) r,
                    a = in(zmm_reg) $a,
                    b = in(zmm_reg) $b,
                    options(pure, nomem, nostack),
                )
            };
            r
        }};
    }

    /// `dst[i] = a[i] op b[i]` for the whole vectors of 32 codes; returns the
    /// points written.
    ///
    /// # Safety
    /// The processor has AVX-512F and AVX512-FP16.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn binary(
        op: HalfOp,
        dst: &mut [u16],
        a: &[u16],
        b: &[u16],
        hints: &[*const u16],
    ) -> usize {
        use crate::vector_runs::prefetch::ahead_all;
        let whole = dst.len().min(a.len()).min(b.len()) / 32 * 32;
        // (a loop per op: a `match` inside one loop stays a jump per vector)
        macro_rules! lanes {
            ($op:literal) => {
                for i in (0..whole).step_by(32) {
                    // (one line of each run per vector)
                    ahead_all(hints, i);
                    // SAFETY: `i + 32 <= whole` codes of each slice (unaligned
                    // loads of 64 bytes).
                    let (x, y) = unsafe {
                        (
                            _mm512_loadu_si512(a.as_ptr().add(i).cast()),
                            _mm512_loadu_si512(b.as_ptr().add(i).cast()),
                        )
                    };
                    let r = ph!($op, x, y);
                    // SAFETY: as for the loads; an unaligned store of 64 bytes.
                    unsafe { _mm512_storeu_si512(dst.as_mut_ptr().add(i).cast(), r) };
                }
            };
        }
        match op {
            HalfOp::Add => lanes!("vaddph"),
            HalfOp::Sub => lanes!("vsubph"),
            HalfOp::Mul => lanes!("vmulph"),
            HalfOp::Div => lanes!("vdivph"),
        }
        whole
    }
}
