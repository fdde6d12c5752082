// Host build of lazyfuse's generated CUDA C (lazyfuse_runtime::cuda_host): the CUDA
// keywords and intrinsics the prelude and the kernels use, for a C++ compiler on the
// CPU. One thread runs the range of points the executor gives it.
#include <cmath>
#include <cstring>
#include <cstdint>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __restrict__ __restrict
#define LF_HOST_BUILD 1
using std::memcpy;

static thread_local long long lf_host_begin, lf_host_end;
#define LF_GRID_FIRST lf_host_begin
#define LF_GRID_STRIDE 1
#define LF_GRID_END(n) lf_host_end
#define LF_BLOCK_FIRST lf_host_begin
#define LF_BLOCK_STRIDE 1

// One thread per block: block reductions return the thread's own partial.
struct lf_host_dim3 {
    unsigned int x, y, z;
};
static const lf_host_dim3 threadIdx = {0, 0, 0};
static const lf_host_dim3 blockDim = {1, 1, 1};
#define __shared__ static
inline void __syncthreads() {}
template <typename T> T __shfl_down_sync(unsigned, T v, int) { return v; }

inline unsigned int __float_as_uint(float x) {
    unsigned int u;
    std::memcpy(&u, &x, 4);
    return u;
}
inline float __uint_as_float(unsigned int u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}
inline long long __double_as_longlong(double x) {
    long long u;
    std::memcpy(&u, &x, 8);
    return u;
}
inline double __longlong_as_double(long long u) {
    double x;
    std::memcpy(&x, &u, 8);
    return x;
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long expected,
                                    unsigned long long v) {
    __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
}
