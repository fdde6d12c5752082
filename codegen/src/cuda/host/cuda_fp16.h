// Host stand-in for cuda_fp16.h: IEEE half conversions in software, rounding to
// nearest even (the `half` crate's algorithm, as the CPU backend rounds).
#pragma once
struct __half {
    unsigned short x;
};
inline __half __ushort_as_half(unsigned short b) { return __half{b}; }
inline unsigned short __half_as_ushort(__half h) { return h.x; }
inline __half __float2half_rn(float f) {
    unsigned int x = __float_as_uint(f);
    unsigned int sign = (x >> 16) & 0x8000u;
    unsigned int exp = x & 0x7f800000u;
    unsigned int man = x & 0x007fffffu;
    if (exp == 0x7f800000u) {
        if (man != 0u) return __half{(unsigned short)(sign | 0x7e00u | (man >> 13))};
        return __half{(unsigned short)(sign | 0x7c00u)};
    }
    int half_exp = (int)(exp >> 23) - 127 + 15;
    if (half_exp >= 0x1f) return __half{(unsigned short)(sign | 0x7c00u)};
    if (half_exp <= 0) {
        if (14 - half_exp > 24) return __half{(unsigned short)sign};
        man |= 0x00800000u;
        int shift = 14 - half_exp;
        unsigned int half_man = man >> shift;
        unsigned int round_bit = 1u << (shift - 1);
        if ((man & round_bit) != 0u && (man & (3u * round_bit - 1u)) != 0u) half_man++;
        return __half{(unsigned short)(sign | half_man)};
    }
    unsigned int h = sign | ((unsigned int)half_exp << 10) | (man >> 13);
    unsigned int round_bit = 0x1000u;
    if ((man & round_bit) != 0u && (man & (3u * round_bit - 1u)) != 0u) h++;
    return __half{(unsigned short)h};
}
inline float __half2float(__half h) {
    unsigned int sign = ((unsigned int)h.x & 0x8000u) << 16;
    unsigned int exp = ((unsigned int)h.x >> 10) & 0x1fu;
    unsigned int man = (unsigned int)h.x & 0x3ffu;
    if (exp == 0x1fu) return __uint_as_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0u) {
        if (man == 0u) return __uint_as_float(sign);
        // subnormal: man * 2^-24, exact in float
        float m = (float)man * 5.9604644775390625e-08f;
        return sign ? -m : m;
    }
    return __uint_as_float(sign | ((exp + 112u) << 23) | (man << 13));
}
