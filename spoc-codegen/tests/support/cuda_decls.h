/* Declarations of the CUDA device API that NVRTC provides built in, for checking generated
 * CUDA C with `clang -x cuda --cuda-device-only -nocudainc -nocudalib -fsyntax-only -include
 * cuda_decls.h`. Signatures follow the CUDA C++ Programming Guide and the CUDA Math API; only
 * what spoc's generated code uses is declared. Declarations only: nothing here is compiled
 * into a kernel. */
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __host__ __attribute__((host))

/* threadIdx, blockIdx, blockDim, gridDim, warpSize */
#include <__clang_cuda_builtin_vars.h>

/* Synchronisation and fences. */
__device__ void __syncthreads(void);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ void __threadfence(void);
__device__ void __threadfence_block(void);

/* Bit reinterpretation. */
__device__ unsigned int __float_as_uint(float x);
__device__ float __uint_as_float(unsigned int x);
__device__ long long __double_as_longlong(double x);
__device__ double __longlong_as_double(long long x);

/* Atomics. */
__device__ int atomicAdd(int* address, int val);
__device__ unsigned int atomicAdd(unsigned int* address, unsigned int val);
__device__ unsigned long long atomicAdd(unsigned long long* address, unsigned long long val);
__device__ float atomicAdd(float* address, float val);
__device__ double atomicAdd(double* address, double val);
__device__ int atomicSub(int* address, int val);
__device__ unsigned int atomicSub(unsigned int* address, unsigned int val);
__device__ int atomicExch(int* address, int val);
__device__ unsigned int atomicExch(unsigned int* address, unsigned int val);
__device__ unsigned long long atomicExch(unsigned long long* address, unsigned long long val);
__device__ float atomicExch(float* address, float val);
__device__ int atomicMin(int* address, int val);
__device__ unsigned int atomicMin(unsigned int* address, unsigned int val);
__device__ unsigned long long atomicMin(unsigned long long* address, unsigned long long val);
__device__ long long atomicMin(long long* address, long long val);
__device__ int atomicMax(int* address, int val);
__device__ unsigned int atomicMax(unsigned int* address, unsigned int val);
__device__ unsigned long long atomicMax(unsigned long long* address, unsigned long long val);
__device__ long long atomicMax(long long* address, long long val);
__device__ int atomicCAS(int* address, int compare, int val);
__device__ unsigned int atomicCAS(unsigned int* address, unsigned int compare, unsigned int val);
__device__ unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare,
                                        unsigned long long val);
__device__ int atomicAnd(int* address, int val);
__device__ unsigned int atomicAnd(unsigned int* address, unsigned int val);
__device__ unsigned long long atomicAnd(unsigned long long* address, unsigned long long val);
__device__ int atomicOr(int* address, int val);
__device__ unsigned int atomicOr(unsigned int* address, unsigned int val);
__device__ unsigned long long atomicOr(unsigned long long* address, unsigned long long val);
__device__ int atomicXor(int* address, int val);
__device__ unsigned int atomicXor(unsigned int* address, unsigned int val);
__device__ unsigned long long atomicXor(unsigned long long* address, unsigned long long val);

/* Warp operations. */
__device__ unsigned int __activemask(void);
__device__ int __any_sync(unsigned int mask, int predicate);
__device__ int __all_sync(unsigned int mask, int predicate);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
#define SPOC_SHFL(T)                                                                            \
    __device__ T __shfl_sync(unsigned int mask, T var, int srcLane, int width = 32);            \
    __device__ T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32);  \
    __device__ T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32);\
    __device__ T __shfl_xor_sync(unsigned int mask, T var, int laneMask, int width = 32);
SPOC_SHFL(int)
SPOC_SHFL(unsigned int)
SPOC_SHFL(long long)
SPOC_SHFL(unsigned long long)
SPOC_SHFL(float)
SPOC_SHFL(double)
#undef SPOC_SHFL

/* Math: single precision (suffix f) and double precision. */
#define SPOC_MATH1(name)                                                                        \
    __device__ float name##f(float x);                                                          \
    __device__ double name(double x);
#define SPOC_MATH2(name)                                                                        \
    __device__ float name##f(float x, float y);                                                 \
    __device__ double name(double x, double y);
SPOC_MATH1(sqrt) SPOC_MATH1(rsqrt) SPOC_MATH1(fabs) SPOC_MATH1(floor) SPOC_MATH1(ceil)
SPOC_MATH1(round) SPOC_MATH1(trunc) SPOC_MATH1(exp) SPOC_MATH1(exp2) SPOC_MATH1(log)
SPOC_MATH1(log2) SPOC_MATH1(log10) SPOC_MATH1(sin) SPOC_MATH1(cos) SPOC_MATH1(tan)
SPOC_MATH1(asin) SPOC_MATH1(acos) SPOC_MATH1(atan) SPOC_MATH1(sinh) SPOC_MATH1(cosh)
SPOC_MATH1(tanh)
SPOC_MATH2(fmin) SPOC_MATH2(fmax) SPOC_MATH2(pow) SPOC_MATH2(atan2) SPOC_MATH2(hypot)
SPOC_MATH2(copysign) SPOC_MATH2(fmod)
__device__ float fmaf(float x, float y, float z);
__device__ double fma(double x, double y, double z);
#undef SPOC_MATH1
#undef SPOC_MATH2
