/*
 * util/cpu.h: what the CPU under this process is, read at run time.
 *
 * The machines sortex runs on differ from run to run (the same binary meets 512 KiB and 1 MiB
 * of L2, AVX2 and AVX-512), so nothing tuned to a cache size is a constant: the kernels ask
 * here, and every results header records the answer.
 */
#ifndef SORTEX_UTIL_CPU_H
#define SORTEX_UTIL_CPU_H

#include <stddef.h>

/** Cache sizes in bytes (per core for L1d and L2, as the OS reports L3); 0 = unknown. */
struct util_caches {
    size_t l1d, l2, l3;
    size_t line; /* cache line, bytes */
};

/**
 * The caches of the CPU this process runs on: /sys/devices/system/cpu/cpu0/cache (the
 * kernel's reading of CPUID), else sysconf(_SC_LEVEL*_CACHE_SIZE) (glibc's), else 0. Read once, then cached. The
 * environment variables SORTEX_L1D_BYTES and SORTEX_L2_BYTES override the two sizes the sort
 * is tuned by (tests use them to drive every path on any machine; benchmarks to try sizes).
 */
const struct util_caches *util_caches(void);

/** The CPU model ("AMD EPYC 9R14 96-Core Processor", "unknown"), from /proc/cpuinfo. */
const char *util_cpu_model(void);

/**
 * One line describing the CPU for results headers: model, logical CPUs, each cache level, and
 * the vector extensions the sort may use, e.g.
 * "AMD EPYC; 2 CPUs; L1d 48 KiB, L2 1024 KiB, L3 32768 KiB; avx2 avx512".
 */
const char *util_cpu_describe(void);

#endif
