// sort/vqsort.cc: the one C++ file of the library, a C entry point to Highway's vqsort.
//
// vqsort (Blacher, Giesen, Sanders and Wassenberg, "Vectorized and performance-portable
// Quicksort", Software: Practice and Experience, 2022) sorts with SIMD sorting networks and
// vectorised partitioning, choosing AVX2, AVX-512 or others at run time. The local sort uses it
// as one of its two in-cache kernels when a calibration finds it faster on the CPU at hand
// (sort/local_sort.c). hwy::Sorter keeps a small buffer between calls and is not shared between
// threads: every thread gets its own.

#include <hwy/contrib/sort/vqsort.h>

#include <cstddef>
#include <cstdint>

extern "C" {
#include "sort/local_sort.h"
}

extern "C" void sortex_vqsort_u64(uint64_t *keys, size_t n)
{
    static thread_local const hwy::Sorter sorter;
    sorter(keys, n, hwy::SortAscending());
}

extern "C" void sortex_vqsort_u128(uint64_t *pairs, size_t n)
{
    static thread_local const hwy::Sorter sorter;
    sorter(reinterpret_cast<hwy::uint128_t *>(pairs), n, hwy::SortAscending());
}
