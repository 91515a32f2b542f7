// netra/dsl/config.hpp — which compiler pass is reading the headers, and the keywords
// that differ between them.
//
// Device headers are read by five compilers: the host C++ compiler (g++/clang, for host
// models and contracts), nvcc (host and device passes), NVRTC, clang in HIP mode (host and
// device passes, with or without the HIP headers) and hipRTC. This header is the only place
// that looks at compiler macros; everything else uses the NETRA_* names defined here.
// Nothing here decides a contract: a contract carries its target as a type.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define NETRA_COMPILER_CUDA 1  // nvcc or NVRTC: sm90a instruction wrappers are available
#elif defined(__HIP__) || defined(__HIPCC_RTC__)
#define NETRA_COMPILER_HIP 1  // clang -x hip or hipRTC: gfx950 instruction wrappers are available
#endif

#if defined(__CUDA_ARCH__) || defined(__AMDGCN__)
#define NETRA_DEVICE_PASS 1  // code is being generated for a GPU
#endif

#if defined(NETRA_COMPILER_HIP) && !defined(__HIPCC_RTC__) && !defined(__global__)
// Headerless HIP (-nogpuinc): spell the attributes the HIP headers would have defined.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#endif

#if defined(NETRA_COMPILER_CUDA)
#define NETRA_DEVICE __device__ __forceinline__
#define NETRA_HOST_DEVICE __host__ __device__ inline
#define NETRA_GLOBAL __global__
#elif defined(NETRA_COMPILER_HIP)
#define NETRA_DEVICE __device__ inline __attribute__((always_inline))
#define NETRA_HOST_DEVICE __host__ __device__ inline
#define NETRA_GLOBAL __global__
#else
#define NETRA_DEVICE inline
#define NETRA_HOST_DEVICE inline
#define NETRA_GLOBAL
#endif

namespace netra {
// Fixed-width integers without <cstdint> (NVRTC and hipRTC ship no C++ standard library).
using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using i32 = int;
using u64 = unsigned long;  // LP64 (Linux, the RTC compilers): the same types as std::uint64_t / std::int64_t
using i64 = long;
static_assert(sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8, "netra: unexpected integer widths");

// Tiny metaprogramming helpers; <type_traits> is unavailable under the RTC compilers.
template <class A, class B> inline constexpr bool same_v = false;
template <class A> inline constexpr bool same_v<A, A> = true;
template <class...> inline constexpr bool dependent_false_v = false;
template <auto...> inline constexpr bool dependent_false_value_v = false;
template <bool B, class T, class F> struct conditional {
  using type = T;
};
template <class T, class F> struct conditional<false, T, F> {
  using type = F;
};
template <bool B, class T, class F> using conditional_t = typename conditional<B, T, F>::type;

// Loop unrolling hint for the GPU compilers (host compilers do not know the pragma).
#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
#define NETRA_UNROLL _Pragma("unroll")
#else
#define NETRA_UNROLL
#endif
/// Keeps a loop rolled (a loop whose unrolled copies would each hold a whole pipeline, or cold
/// code that should stay small).
#if defined(NETRA_COMPILER_CUDA) || defined(NETRA_COMPILER_HIP)
#define NETRA_NO_UNROLL _Pragma("unroll 1")
#else
#define NETRA_NO_UNROLL
#endif

/// A list of types (kernels of a contract, contracts of a catalog slice).
template <class... Ts> struct type_list {
  static constexpr unsigned size = sizeof...(Ts);
};

template <class T> NETRA_HOST_DEVICE constexpr T min_of(T a, T b) { return b < a ? b : a; }
template <class T> NETRA_HOST_DEVICE constexpr T max_of(T a, T b) { return a < b ? b : a; }
template <class T> NETRA_HOST_DEVICE constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }
template <class T> NETRA_HOST_DEVICE constexpr T round_up(T a, T b) { return ceil_div(a, b) * b; }
template <class T> NETRA_HOST_DEVICE constexpr bool is_pow2(T a) { return a > 0 && (a & (a - 1)) == 0; }

template <class To, class From> NETRA_HOST_DEVICE constexpr To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "netra::bit_cast: sizes differ");
  return __builtin_bit_cast(To, from);
}
}  // namespace netra
