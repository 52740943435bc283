// local/vqsort.cc: the one C++ file of the library, a C entry point to Highway's vqsort.
//
// vqsort (Blacher, Giesen, Sanders and Wassenberg, "Vectorized and performance-portable
// Quicksort", Software: Practice and Experience, 2022) sorts with SIMD sorting networks and
// vectorised partitioning, choosing AVX2, AVX-512 or others at run time. The local sort uses it
// as one of its two in-cache kernels when a calibration finds it faster on the CPU at hand
// (local/tuning.c). hwy::Sorter keeps a small buffer between calls and is not shared between
// threads: every thread gets its own.
//
// Built with SORTEX_VQSORT=0 (make VQSORT=0), the same entry points sort with std::sort and the
// program does not link Highway. That build exists for valgrind: libhwy's start-up code executes
// rdtscp unconditionally, which valgrind refuses on CPUs that do not advertise it, so no program
// linked with libhwy can start under valgrind there. Only the memcheck test profile uses it.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if SORTEX_VQSORT
#include <hwy/contrib/sort/vqsort.h>
#endif

extern "C" {
#include "local/local.h"
}

#if SORTEX_VQSORT

extern "C" void local_vqsort_u64(uint64_t *keys, size_t n)
{
    static thread_local const hwy::Sorter sorter;
    sorter(keys, n, hwy::SortAscending());
}

extern "C" void local_vqsort_u128(uint64_t *pairs, size_t n)
{
    static thread_local const hwy::Sorter sorter;
    sorter(reinterpret_cast<hwy::uint128_t *>(pairs), n, hwy::SortAscending());
}

#else

extern "C" void local_vqsort_u64(uint64_t *keys, size_t n)
{
    std::sort(keys, keys + n);
}

namespace {
struct u128 {
    uint64_t lo, hi;
};
} // namespace

extern "C" void local_vqsort_u128(uint64_t *pairs, size_t n)
{
    u128 *p = reinterpret_cast<u128 *>(pairs);
    std::sort(p, p + n, [](const u128 &a, const u128 &b) {
        return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
    });
}

#endif
