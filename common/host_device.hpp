// STOKER_HD marks a function that both the CPU and the GPU run. Under nvcc
// it is __host__ __device__ and always inlined, so a field product or a hash
// step never becomes a call inside a kernel; a plain C++ compiler sees an
// inline function. The CPU references and the kernels then share one
// definition and agree bit for bit. STOKER_UNROLL, before a loop, unrolls
// it in nvcc's device pass, where an array indexed by the loop variable
// would otherwise live in local memory; the host passes get a plain loop,
// since GCC does not know the pragma and would warn about it.
#pragma once

#if defined(__CUDACC__)
#define STOKER_HD __host__ __device__ __forceinline__
#else
#define STOKER_HD inline
#endif

#if defined(__CUDA_ARCH__)
#define STOKER_UNROLL _Pragma("unroll")
#else
#define STOKER_UNROLL
#endif
