// bench/baselines.h: the sorts users know, as sortex-localsort times them.
//
// Each is one function over plain arrays, compiled apart in bench/baselines.cc: their template
// instantiations (ips4o, Boost.Sort, libstdc++'s parallel mode, Highway) are most of the
// benchmark's build time, and a separate object builds beside the harness and is rebuilt only
// when this list changes.
#ifndef SORTEX_BENCH_BASELINES_H
#define SORTEX_BENCH_BASELINES_H

#include <cstddef>
#include <cstdint>

namespace baselines {

// 8-byte unsigned keys, ascending, in place.
void ips4o(uint64_t *a, size_t n);                     // ips4o::sort (Debian libips4o-dev)
void ips4o_par(uint64_t *a, size_t n, int threads);    // ips4o::parallel::sort
void vqsort(uint64_t *a, size_t n);                    // Highway's vqsort (Debian libhwy-dev)
void boost_bis(uint64_t *a, size_t n, int threads);    // Boost.Sort block_indirect_sort
void boost_spread(uint64_t *a, size_t n);              // Boost.Sort spreadsort integer_sort
void std_sort(uint64_t *a, size_t n);                  // std::sort
void gnu_parallel(uint64_t *a, size_t n, int threads); // __gnu_parallel::sort, multiway mergesort

// The Sort Benchmark's 100-byte records, ordered by their first 10 bytes as unsigned bytes.
void ips4o_rec100(void *r, size_t n);
void ips4o_par_rec100(void *r, size_t n, int threads);
void std_stable_rec100(void *r, size_t n); // std::stable_sort

} // namespace baselines

#endif
