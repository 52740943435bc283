// bench/baselines.cc: the sorts users know, one function each (see baselines.h).
#include "bench/baselines.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <parallel/algorithm>

#include <boost/sort/sort.hpp>
#include <hwy/contrib/sort/vqsort.h>
#include <ips4o.hpp>
#include <omp.h>

namespace baselines {

namespace {

// The Sort Benchmark's record: the baselines' sorts need a type with its order.
struct record100 {
    unsigned char b[100];
    bool operator<(const record100 &o) const
    {
        return std::memcmp(b, o.b, 10) < 0;
    }
};

} // namespace

void ips4o(uint64_t *a, size_t n)
{
    ::ips4o::sort(a, a + n);
}

void ips4o_par(uint64_t *a, size_t n, int threads)
{
    ::ips4o::parallel::sort(a, a + n, std::less<>(), threads);
}

void vqsort(uint64_t *a, size_t n)
{
    static const hwy::Sorter sorter; // its buffers are allocated once
    sorter(a, n, hwy::SortAscending());
}

void boost_bis(uint64_t *a, size_t n, int threads)
{
    boost::sort::block_indirect_sort(a, a + n, (uint32_t)threads);
}

void boost_spread(uint64_t *a, size_t n)
{
    boost::sort::spreadsort::integer_sort(a, a + n);
}

void std_sort(uint64_t *a, size_t n)
{
    std::sort(a, a + n);
}

void gnu_parallel(uint64_t *a, size_t n, int threads)
{
    omp_set_num_threads(threads);
    __gnu_parallel::sort(a, a + n, __gnu_parallel::multiway_mergesort_tag());
}

void ips4o_rec100(void *r, size_t n)
{
    auto *b = static_cast<record100 *>(r);
    ::ips4o::sort(b, b + n);
}

void ips4o_par_rec100(void *r, size_t n, int threads)
{
    auto *b = static_cast<record100 *>(r);
    ::ips4o::parallel::sort(b, b + n, std::less<>(), threads);
}

void std_stable_rec100(void *r, size_t n)
{
    auto *b = static_cast<record100 *>(r);
    std::stable_sort(b, b + n);
}

} // namespace baselines
