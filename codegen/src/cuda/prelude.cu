// lazyfuse CUDA prelude: the scalar semantics of the kernel IR (the reference
// interpreter's numerics, `lazyfuse_runtime::interp`), as device functions that every
// generated kernel includes. Each function names the interpreter function it follows.
// Float functions are templates over the compute type (float or double): float16 and
// bfloat16 values are computed in float and rounded after every op, as on the CPU.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef signed char i8;
typedef unsigned char u8;
typedef short i16;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

#define LF_D __device__ __forceinline__

// The points a thread takes: a grid-stride loop over the parallel points. A host
// build of this source (lazyfuse_runtime::cuda_host, which checks the generated code's
// semantics on the CPU) defines them first, to run a range of points on one thread.
#ifndef LF_GRID_FIRST
#define LF_GRID_FIRST ((i64)blockIdx.x * blockDim.x + threadIdx.x)
#define LF_GRID_STRIDE ((i64)gridDim.x * blockDim.x)
#define LF_GRID_END(n) (n)
#endif

// ---- status (kernel IR `Status`): the first code set wins, with its details ----
LF_D void lf_set_status(u64* status, u64 code, u64 a, u64 b, u64 c) {
    if (atomicCAS(status, 0ull, code) == 0ull) {
        status[1] = a;
        status[2] = b;
        status[3] = c;
    }
}

// The blocks a block-per-point kernel takes (see LF_GRID_FIRST for the host build).
#ifndef LF_BLOCK_FIRST
#define LF_BLOCK_FIRST ((i64)blockIdx.x)
#define LF_BLOCK_STRIDE ((i64)gridDim.x)
#endif

// ---- block reductions: every thread's partial `v` combined with `f` (associative),
// the result in every thread. Warp shuffles, then one partial per warp through
// `smem` (32 slots). The block size is 1 or a multiple of 32 (the launcher's). ----
template <typename T> LF_D T lf_shfl_down(T v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
LF_D bool lf_shfl_down(bool v, int off) { return __shfl_down_sync(0xffffffffu, (int)v, off) != 0; }
LF_D i8 lf_shfl_down(i8 v, int off) { return (i8)__shfl_down_sync(0xffffffffu, (int)v, off); }
LF_D u8 lf_shfl_down(u8 v, int off) { return (u8)__shfl_down_sync(0xffffffffu, (int)v, off); }
LF_D i16 lf_shfl_down(i16 v, int off) { return (i16)__shfl_down_sync(0xffffffffu, (int)v, off); }
LF_D u16 lf_shfl_down(u16 v, int off) { return (u16)__shfl_down_sync(0xffffffffu, (int)v, off); }
template <typename T, typename F> LF_D T lf_block_reduce(T v, F f, T* smem) {
    if (blockDim.x == 1) return v;
    for (int off = 16; off > 0; off >>= 1) v = f(v, lf_shfl_down(v, off));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = (blockDim.x + 31) >> 5;
    __syncthreads();  // an earlier call's readers are done with smem
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T x = smem[lane < warps ? lane : 0];
        for (int off = 16; off > 0; off >>= 1) {
            T o = lf_shfl_down(x, off);
            if (lane + off < warps) x = f(x, o);
        }
        if (lane == 0) smem[0] = x;
    }
    __syncthreads();
    return smem[0];
}

// ---- vector loads and stores: four consecutive elements, aligned to their size (the
// buffers are; the code generator proves the element offset is a multiple of four) ----
template <typename T> struct alignas(4 * sizeof(T)) lf_v4 {
    T v[4];
};
#ifdef LF_HOST_BUILD
// The host build's buffers are only element-aligned: copy bytes.
template <typename T> LF_D lf_v4<T> lf_vload4(const T* p) {
    lf_v4<T> x;
    memcpy(x.v, p, sizeof x.v);
    return x;
}
template <typename T> LF_D void lf_vstore4(T* p, lf_v4<T> x) { memcpy(p, x.v, sizeof x.v); }
#else
template <typename T> LF_D lf_v4<T> lf_vload4(const T* p) {
    return *reinterpret_cast<const lf_v4<T>*>(p);
}
template <typename T> LF_D void lf_vstore4(T* p, lf_v4<T> x) {
    *reinterpret_cast<lf_v4<T>*>(p) = x;
}
#endif

// ---- storage conversions ----
LF_D float lf_f16_load(u16 bits) { return __half2float(__ushort_as_half(bits)); }
LF_D u16 lf_f16_bits(float x) { return __half_as_ushort(__float2half_rn(x)); }
LF_D float lf_round_f16(float x) { return __half2float(__float2half_rn(x)); }
LF_D float lf_bf16_load(u16 bits) { return __uint_as_float(((u32)bits) << 16); }
// half::bf16::from_f32: nearest even on the upper 16 bits; NaN keeps its upper bits
// and gets the quiet bit (the CPU backend's `vround_narrow`).
LF_D u16 lf_bf16_bits(float x) {
    u32 b = __float_as_uint(x);
    u32 hi = b >> 16;
    if ((b & 0x7fffffffu) > 0x7f800000u) return (u16)(hi | 0x40u);
    u32 up = ((b & 0x8000u) != 0u) && ((b & (3u * 0x8000u - 1u)) != 0u);
    return (u16)(hi + up);
}
LF_D float lf_round_bf16(float x) { return lf_bf16_load(lf_bf16_bits(x)); }

// ---- float8 (interp::float8): exact decode, nearest-even encode ----
// specials: 0 = all-ones NaN (e4m3fn), 1 = IEEE (e5m2), 2 = fnuz (0x80 is NaN)
LF_D float lf_pow2f(int k) { return __uint_as_float((u32)(k + 127) << 23); }
LF_D float lf_f8_decode(u8 code, int man, int bias, int specials) {
    int negative = (code & 0x80) != 0;
    u32 exp_max = (1u << (7 - man)) - 1u;
    u32 e = ((u32)code >> man) & exp_max;
    u32 m = (u32)code & ((1u << man) - 1u);
    int nan = specials == 2 ? code == 0x80 : specials == 0 ? (code & 0x7f) == 0x7f
                                                         : (e == exp_max && m != 0u);
    float mag;
    if (nan) {
        mag = __uint_as_float(0x7fc00000u);
    } else if (specials == 1 && e == exp_max) {
        mag = __uint_as_float(0x7f800000u);
    } else if (e == 0u) {
        mag = (float)m * lf_pow2f(1 - bias - man);
    } else {
        mag = (float)((1u << man) | m) * lf_pow2f((int)e - bias - man);
    }
    return negative ? -mag : mag;
}
LF_D u8 lf_f8_encode(float x, int man, int bias, int specials) {
    u8 sign = (__float_as_uint(x) >> 31) ? 0x80 : 0;
    u32 overflow = specials == 0 ? 0x7fu : specials == 1 ? 0x7cu : 0x80u;
    u32 code;
    if (x != x) {
        if (specials == 2) return 0x80;
        code = 0x7fu;
    } else {
        float a = fabsf(x);
        if (a == __uint_as_float(0x7f800000u)) {
            code = overflow;
        } else {
            int emin = 1 - bias;
            int biased = (int)(__float_as_uint(a) >> 23);
            int e = biased - 127 > emin ? biased - 127 : emin;
            int shift = e - man;
            double scale = __longlong_as_double((i64)(1023 - shift) << 52);
            u32 n = (u32)rint((double)a * scale);
            code = ((u32)(e - emin) << man) + n;
            if (code > overflow) code = overflow;
        }
    }
    if (specials == 2 && (code == 0u || code == 0x80u)) return (u8)code;
    return (u8)code | sign;
}
LF_D float lf_e8m0_decode(u8 code) {
    if (code == 0xff) return __uint_as_float(0x7fc00000u);
    if (code == 0) return __uint_as_float(0x00400000u);
    return __uint_as_float((u32)code << 23);
}
LF_D u8 lf_e8m0_encode(float x) {
    u32 bits = __float_as_uint(x);
    u32 e = (bits >> 23) & 0xffu;
    if (e == 0xffu) return 0xff;
    u32 m = bits & 0x007fffffu;
    u32 half = 0x00400000u;
    u32 up = m > half || (m == half && e != 0u);
    return (u8)(e + up);
}

// ---- casts (interp::cast): float to integer saturates in int64, NaN is 0 ----
template <typename R> LF_D i64 lf_f2i64(R x) {
    if (x != x) return 0;
    if (x >= (R)9223372036854775808.0) return 0x7fffffffffffffffll;
    if (x <= (R)-9223372036854775808.0) return (i64)0x8000000000000000ull;
    return (i64)x;
}
template <typename R> LF_D u64 lf_f2u64(R x) {
    if (x >= (R)9223372036854775808.0) {
        if (x >= (R)18446744073709551616.0) return 0xffffffffffffffffull;
        return (u64)x;
    }
    return (u64)lf_f2i64(x);
}

// ---- math wrappers: one name for float and double ----
#define LF_MATH1(name, f32fn, f64fn) \
    LF_D float name(float x) { return f32fn(x); } \
    LF_D double name(double x) { return f64fn(x); }
LF_MATH1(lf_exp, expf, exp)
LF_MATH1(lf_log, logf, log)
LF_MATH1(lf_sin, sinf, sin)
LF_MATH1(lf_cos, cosf, cos)
LF_MATH1(lf_tan, tanf, tan)
LF_MATH1(lf_tanh, tanhf, tanh)
LF_MATH1(lf_exp2, exp2f, exp2)
LF_MATH1(lf_expm1, expm1f, expm1)
LF_MATH1(lf_log2, log2f, log2)
LF_MATH1(lf_log10, log10f, log10)
LF_MATH1(lf_log1p, log1pf, log1p)
LF_MATH1(lf_asin, asinf, asin)
LF_MATH1(lf_acos, acosf, acos)
LF_MATH1(lf_atan, atanf, atan)
LF_MATH1(lf_sinh, sinhf, sinh)
LF_MATH1(lf_cosh, coshf, cosh)
LF_MATH1(lf_asinh, asinhf, asinh)
LF_MATH1(lf_acosh, acoshf, acosh)
LF_MATH1(lf_atanh, atanhf, atanh)
LF_MATH1(lf_erf, erff, erf)
LF_MATH1(lf_erfc, erfcf, erfc)
LF_MATH1(lf_sqrt, sqrtf, sqrt)
LF_MATH1(lf_floor, floorf, floor)
LF_MATH1(lf_ceil, ceilf, ceil)
LF_MATH1(lf_trunc, truncf, trunc)
LF_MATH1(lf_rint, rintf, rint)
LF_MATH1(lf_fabs, fabsf, fabs)
#define LF_MATH2(name, f32fn, f64fn) \
    LF_D float name(float x, float y) { return f32fn(x, y); } \
    LF_D double name(double x, double y) { return f64fn(x, y); }
LF_MATH2(lf_fmod, fmodf, fmod)
LF_MATH2(lf_pow, powf, pow)
LF_MATH2(lf_atan2, atan2f, atan2)
LF_MATH2(lf_hypot, hypotf, hypot)
LF_MATH2(lf_copysign, copysignf, copysign)

template <typename R> LF_D bool lf_isnan(R x) { return x != x; }
template <typename R> LF_D R lf_nan() { return (R)__uint_as_float(0x7fc00000u); }
template <typename R> LF_D R lf_inf() { return (R)__uint_as_float(0x7f800000u); }

// ---- unary float ops (interp::pointwise) ----
template <typename R> LF_D R lf_sigmoid(R a) { return (R)1 / ((R)1 + lf_exp(-a)); }
template <typename R> LF_D R lf_silu(R a) { return a / ((R)1 + lf_exp(-a)); }
template <typename R> LF_D R lf_mish(R a) { return a * lf_tanh(lf_log1p(lf_exp(a))); }
template <typename R> LF_D R lf_hardsigmoid(R a) {
    R t = a + (R)3;
    if (t != t) return t;
    if (t < (R)0) t = (R)0;
    return (t > (R)6 ? (R)6 : t) / (R)6;
}
template <typename R> LF_D R lf_hardswish(R a) { return a * lf_hardsigmoid(a); }
// PyTorch's calc_erfinv: a rational first guess, then two Newton steps.
template <typename R> LF_D R lf_erfinv(R y) {
    const R a0 = (R)0.886226899, a1 = (R)-1.645349621, a2 = (R)0.914624893,
            a3 = (R)-0.140543331;
    const R b0 = (R)-2.118377725, b1 = (R)1.442710462, b2 = (R)-0.329097515,
            b3 = (R)0.012229801;
    const R c0 = (R)-1.970840454, c1 = (R)-1.624906493, c2 = (R)3.429567803,
            c3 = (R)1.641345311;
    const R d0 = (R)3.543889200, d1 = (R)1.637067800;
    R y_abs = lf_fabs(y);
    if (y_abs > (R)1) return lf_nan<R>();
    if (y_abs == (R)1) return lf_copysign(lf_inf<R>(), y);
    R x;
    if (y_abs <= (R)0.7) {
        R z = y * y;
        R num = ((a3 * z + a2) * z + a1) * z + a0;
        R dem = (((b3 * z + b2) * z + b1) * z + b0) * z + (R)1;
        x = y * num / dem;
    } else {
        R z = lf_sqrt(-lf_log(((R)1 - y_abs) / (R)2));
        R num = ((c3 * z + c2) * z + c1) * z + c0;
        R dem = (d1 * z + d0) * z + (R)1;
        x = lf_copysign(num, y) / dem;
    }
    const R two_over_sqrt_pi = (R)1.1283791670955126;
    for (int i = 0; i < 2; ++i) x = x - (lf_erf(x) - y) / (two_over_sqrt_pi * lf_exp(-x * x));
    return x;
}
// NaN-propagating maximum/minimum (torch.maximum): a < b ? b : a, NaN if either is.
template <typename R> LF_D R lf_maximum(R a, R b) {
    if (a != a || b != b) return lf_nan<R>();
    return a < b ? b : a;
}
template <typename R> LF_D R lf_minimum(R a, R b) {
    if (a != a || b != b) return lf_nan<R>();
    return b < a ? b : a;
}

// ---- binary float ops (interp::elementwise, interp::binary_ext) ----
template <typename R> LF_D R lf_div_floor(R a, R b) {
    if (b == (R)0) return a / b;
    R m = lf_fmod(a, b);
    R div = (a - m) / b;
    if (m != (R)0 && ((b < (R)0) != (m < (R)0))) div = div - (R)1;
    if (div != (R)0) {
        R fl = lf_floor(div);
        if (div - fl > (R)0.5) fl = fl + (R)1;
        return fl;
    }
    return lf_copysign((R)0, a / b);
}
template <typename R> LF_D R lf_remainder(R a, R b) {
    R m = lf_fmod(a, b);
    if (m != (R)0 && ((b < (R)0) != (m < (R)0))) return m + b;
    return m;
}
template <typename R> LF_D R lf_fmax(R a, R b) {
    if (a != a) return b;
    if (b != b) return a;
    return a < b ? b : a;
}
template <typename R> LF_D R lf_fmin(R a, R b) {
    if (a != a) return b;
    if (b != b) return a;
    return b < a ? b : a;
}
template <typename R> LF_D R lf_logaddexp(R a, R b) {
    if (lf_fabs(a) == lf_inf<R>() && a == b) return a;
    R m = a < b ? b : a;
    return m + lf_log1p(lf_exp(-lf_fabs(a - b)));
}
template <typename R> LF_D R lf_logaddexp2(R a, R b) {
    if (lf_fabs(a) == lf_inf<R>() && a == b) return a;
    R m = a < b ? b : a;
    return m + lf_log1p(lf_exp2(-lf_fabs(a - b))) * (R)1.4426950408889634;
}
template <typename R> LF_D R lf_xlogy(R x, R y) {
    if (y != y) return lf_nan<R>();
    if (x == (R)0) return (R)0;
    return x * lf_log(y);
}
// logcumsumexp's step (interp::scan::log_add_exp), in double.
LF_D double lf_scan_log_add_exp(double x, double acc) {
    double lo, hi;
    if (acc != acc) {
        lo = acc;
        hi = acc;
    } else if (x != x) {
        lo = x;
        hi = x;
    } else {
        lo = fmin(x, acc);
        hi = fmax(x, acc);
    }
    if (lo != hi || fabs(lo) < lf_inf<double>()) return log1p(exp(lo - hi)) + hi;
    return x;
}

// nextafter on the stored type's bits (interp::binary_ext::nextafter); `sign` is the
// sign bit of the stored type.
template <typename B> LF_D B lf_nextafter_bits(double xf, double yf, B bits, B sign, B nan) {
    if (xf != xf || yf != yf) return nan;
    if (xf == yf) return (B)0;  // the caller returns y
    if (xf == 0.0) return (B)(1 | (yf < 0.0 ? sign : (B)0));
    if ((yf > xf) == (xf > 0.0)) return (B)(bits + 1);
    return (B)(bits - 1);
}
LF_D float lf_nextafter_f32(float x, float y) {
    if (x == y && x == x) return y;
    return __uint_as_float(lf_nextafter_bits<u32>(x, y, __float_as_uint(x), 0x80000000u,
                                                  0x7fc00000u));
}
LF_D double lf_nextafter_f64(double x, double y) {
    if (x == y && x == x) return y;
    return __longlong_as_double((i64)lf_nextafter_bits<u64>(
        x, y, (u64)__double_as_longlong(x), 0x8000000000000000ull, 0x7ff8000000000000ull));
}
LF_D float lf_nextafter_f16(float x, float y) {
    if (x == y && x == x) return y;
    return lf_f16_load(lf_nextafter_bits<u16>(x, y, lf_f16_bits(x), 0x8000, 0x7e00));
}
LF_D float lf_nextafter_bf16(float x, float y) {
    if (x == y && x == x) return y;
    return lf_bf16_load(lf_nextafter_bits<u16>(x, y, lf_bf16_bits(x), 0x8000, 0x7fc0));
}

// ---- integer ops (interp::elementwise::int_pow, interp::binary_ext) ----
template <typename T> LF_D T lf_int_pow(T base, T e) {
    if (e < (T)0) {
        if (base == (T)1) return (T)1;
        if (base == (T)-1) return (e % (T)2) != (T)0 ? base : (T)1;
        return (T)0;
    }
    // products in u64: wrapping, as the interpreter's wrapping_mul
    T result = (T)1;
    while (e != (T)0) {
        if (e & (T)1) result = (T)((u64)result * (u64)base);
        e = (T)(e >> 1);
        base = (T)((u64)base * (u64)base);
    }
    return result;
}
template <typename T> LF_D T lf_shift_left(T a, T b, int bits) {
    if (b < (T)0 || (i64)b >= (i64)bits) return (T)0;
    return (T)((u64)a << (int)b);
}
template <typename T> LF_D T lf_shift_right(T a, T b, int bits, int is_signed) {
    i64 max_shift = bits - is_signed;
    i64 s = (b < (T)0 || (i64)b >= max_shift) ? max_shift : (i64)b;
    if (s >= bits) return (T)0;
    return (T)(a >> (int)s);
}
template <typename T> LF_D T lf_wrapping_abs(T a) { return a < (T)0 ? (T)(0ull - (u64)a) : a; }
template <typename T> LF_D T lf_gcd(T a, T b) {
    a = lf_wrapping_abs(a);
    b = lf_wrapping_abs(b);
    while (a != (T)0) {
        T c = a;
        a = (T)(b % a);
        b = c;
    }
    return b;
}
template <typename T> LF_D T lf_lcm(T a, T b, int bits) {
    T g = lf_gcd(a, b);
    if (g == (T)0) return (T)0;
    if (bits < 32) {
        i64 v = (i64)a / (i64)g * (i64)b;
        return (T)(v < 0 ? -v : v);
    }
    return lf_wrapping_abs((T)((u64)(T)(a / g) * (u64)b));
}

// Integer division and remainder (the CPU backend's `int_div`): a zero divisor sets
// status 1 (ZeroDivision) and divides by 1; MIN / -1 divides by 1 (the same wrapped
// result, no trap). kind: 0 floor division, 1 truncating division, 2 remainder
// (Python's, the divisor's sign), 3 fmod (C's, the dividend's sign).
template <typename T> LF_D T lf_idiv(T x, T y, int kind, T min, int is_signed, u64* status) {
    bool zero = y == (T)0;
    if (zero) lf_set_status(status, 1ull, 0ull, 0ull, 0ull);
    bool unsafe_div = zero || (is_signed && x == min && y == (T)-1);
    T d = unsafe_div ? (T)1 : y;
    T q = (T)(x / d);
    T r = (T)(x % d);
    if (!is_signed) return kind <= 1 ? q : r;
    if (kind == 1) return q;
    if (kind == 3) return r;
    if (kind == 0) return ((x < (T)0) != (y < (T)0)) && r != (T)0 ? (T)(q - (T)1) : q;
    return ((r < (T)0) != (y < (T)0)) && r != (T)0 ? (T)(r + y) : r;
}

// ---- parameterised float ops (interp::pointwise::param_real); the parameters
// arrive converted to the compute type, as the interpreter's `c(...)` ----
template <typename R> LF_D R lf_logit(R a, int clamp, R lo, R hi) {
    R x = a;
    if (clamp) x = a < lo ? lo : (a > hi ? hi : a);
    if (x == (R)1) return lf_inf<R>();
    return lf_log(x / ((R)1 - x));
}
template <typename R> LF_D R lf_round_decimals(R a, int negative, R ten) {
    return negative ? lf_rint(a / ten) * ten : lf_rint(a * ten) / ten;
}
template <typename R> LF_D R lf_gelu(R a, R frac_1_sqrt_2) {
    return a * (R)0.5 * ((R)1 + lf_erf(a * frac_1_sqrt_2));
}
template <typename R> LF_D R lf_gelu_tanh(R a, R beta, R kappa) {
    R inner = beta * (a + kappa * (a * a * a));
    return (R)0.5 * a * ((R)1 + lf_tanh(inner));
}
template <typename R> LF_D R lf_softplus(R a, R beta, R threshold) {
    R z = a * beta;
    return z > threshold ? a : lf_log1p(lf_exp(z)) / beta;
}
template <typename R> LF_D R lf_elu(R a, R input_scale, R alpha_scale, R scale) {
    return a <= (R)0 ? lf_expm1(a * input_scale) * alpha_scale : a * scale;
}
template <typename R> LF_D R lf_leaky_relu(R a, R slope) { return a > (R)0 ? a : a * slope; }
template <typename R> LF_D R lf_hardtanh(R a, R lo, R hi) {
    R m = lf_isnan(a) || lf_isnan(lo) ? lf_nan<R>() : (a < lo ? lo : a);
    return lf_isnan(m) || lf_isnan(hi) ? lf_nan<R>() : (hi < m ? hi : m);
}
LF_D bool lf_signbit(float x) { return (__float_as_uint(x) >> 31) != 0u; }
LF_D bool lf_signbit(double x) { return __double_as_longlong(x) < 0; }
