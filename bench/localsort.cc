// bench/localsort.cc: the node-local sort kernels against the baselines, on keys made in memory.
//
//   sortex-localsort --algo sortex,gnu_parallel --dist uniform,few --n 1e8 --threads 1,2
//                    --reps 5 [--warmup 1] [--runs P --skew equal|zipf] [--touch pre|first] [--csv]
//
// Algorithms (the kernels under test and the baselines they are compared with):
//   sortex        sortex_local_sort() (re-sorts the concatenated runs when --runs is given)
//   merge         sortex_merge_runs() of the --runs sorted runs
//   qsort         glibc qsort()                       (one thread whatever --threads says)
//   std           C++ std::sort                       (one thread whatever --threads says)
//   gnu_parallel  libstdc++ __gnu_parallel::sort (multiway mergesort) with --threads threads
//   pretouch      util_pretouch() of a fresh util_alloc_big() buffer of n keys (huge pages)
//   pretouch4k    the same for a buffer advised MADV_NOHUGEPAGE (4 KiB pages)
//
// Every repetition starts from a pristine copy of the generated keys, so generation and copy
// are outside the timed region; the repetitions of the algorithms are interleaved (A B A B ...)
// so that noise from other work on the machine hits all of them alike. After each repetition
// the output is checked: ascending, and the same multiset (count, sum and xor of a mix of
// every key). --touch first hands the sort a fresh, never-touched scratch buffer each time
// (its page faults are then inside the timed region); the default pre-touches once.
//
// Output: with --csv one line per repetition "algo,dist,n,threads,rep,seconds,mkeys_per_s"
// (plus ",cpu_seconds" with --cpu-time: CPU time of all threads, which on a shared machine is
// less disturbed than wall time when other work preempts the sort; OpenMP threads that spin
// at barriers count too) after '#' comment lines describing the machine and the build; otherwise a summary table of
// min / median / max per configuration. Exit status: 0, 1 when a check failed, 2 on bad usage.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <parallel/algorithm>
#include <string>
#include <ctime>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include <omp.h>

extern "C" {
#include "sort/local_sort.h"
#include "util/alloc.h"
#include "util/util.h"
}

namespace {

// splitmix64 finaliser: a counter-based generator, so keys can be made in parallel.
uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// The distributions, in the order of enum dist.
const char *const dists[] = {"uniform", "few", "sorted", "reverse", "nearly", "radix", nullptr};
enum dist { DIST_UNIFORM, DIST_FEW, DIST_SORTED, DIST_REVERSE, DIST_NEARLY, DIST_RADIX };

bool known(const char *const *names, const std::string &s)
{
    for (int i = 0; names[i] != nullptr; i++) {
        if (s == names[i]) {
            return true;
        }
    }
    return false;
}

// Fills a[0..n) with distribution @dist (seeded by @seed).
void generate(uint64_t *a, size_t n, const std::string &dist_name, uint64_t seed, int threads)
{
    uint64_t stride = n ? UINT64_MAX / n : 1;
    int d = 0;
    while (dists[d] != nullptr && dist_name != dists[d]) {
        d++;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        uint64_t r = mix(seed ^ (i * 0xd1342543de82ef95ULL));
        uint64_t k;
        if (d == DIST_FEW) {
            k = mix(seed + r % 1000); // 1000 distinct random values
        } else if (d == DIST_SORTED || d == DIST_NEARLY) {
            k = i * stride + r % stride;
        } else if (d == DIST_REVERSE) {
            k = (n - 1 - i) * stride + r % stride;
        } else if (d == DIST_RADIX) {
            k = 0x0123456789ULL << 24 | (r & 0xffffff); // top 5 bytes shared
        } else {
            k = r;
        }
        a[i] = k;
    }
    if (d == DIST_NEARLY) { // sorted, then 1% of the keys swapped with a random other
        for (size_t j = 0; j < n / 100; j++) {
            size_t p = mix(seed + 2 * j) % n, q = mix(seed + 2 * j + 1) % n;
            std::swap(a[p], a[q]);
        }
    }
}

// Order-independent fingerprint of a multiset of keys.
struct fingerprint {
    uint64_t sum = 0, xr = 0;
    bool operator==(const fingerprint &o) const
    {
        return sum == o.sum && xr == o.xr;
    }
};

fingerprint fingerprint_of(const uint64_t *a, size_t n, int threads)
{
    uint64_t sum = 0, xr = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : sum) reduction(^ : xr)
    for (size_t i = 0; i < n; i++) {
        uint64_t h = mix(a[i]);
        sum += h;
        xr ^= h * 0x2545f4914f6cdd1dULL;
    }
    fingerprint f;
    f.sum = sum;
    f.xr = xr;
    return f;
}

bool is_sorted_par(const uint64_t *a, size_t n, int threads)
{
    int bad = 0;
#pragma omp parallel for num_threads(threads) reduction(| : bad)
    for (size_t i = 1; i < n; i++) {
        bad |= a[i - 1] > a[i];
    }
    return !bad;
}

int cmp_u64(const void *p, const void *q)
{
    uint64_t a = *static_cast<const uint64_t *>(p), b = *static_cast<const uint64_t *>(q);
    return (a > b) - (a < b);
}

std::vector<std::string> split_list(const char *s)
{
    std::vector<std::string> out;
    std::string cur;
    for (const char *c = s;; c++) {
        if (*c == ',' || *c == '\0') {
            if (!cur.empty()) {
                out.push_back(cur);
            }
            cur.clear();
            if (*c == '\0') {
                break;
            }
        } else {
            cur += *c;
        }
    }
    return out;
}

// Run sizes: equal, or Zipf-like (run r gets a share proportional to 1 / (r + 1)).
std::vector<uint64_t> run_sizes(size_t n, int runs, const std::string &skew)
{
    std::vector<uint64_t> c(static_cast<size_t>(runs), 0);
    double total = 0;
    for (int r = 0; r < runs; r++) {
        total += skew == "zipf" ? 1.0 / (r + 1) : 1.0;
    }
    size_t given = 0;
    for (int r = 0; r < runs; r++) {
        double w = (skew == "zipf" ? 1.0 / (r + 1) : 1.0) / total;
        c[r] = r + 1 == runs ? n - given : std::min<size_t>(n - given, (size_t)(w * (double)n));
        given += c[r];
    }
    return c;
}

struct options {
    std::vector<std::string> algos{"sortex"};
    std::vector<std::string> dists{"uniform"};
    std::vector<long> threads{1};
    uint64_t n = 1000000;
    long reps = 5;
    long warmup = 1;
    long runs = 0;
    std::string skew = "equal";
    std::string touch = "pre";
    bool csv = false;
    bool cpu = false;
};

void usage(FILE *out)
{
    std::fprintf(out,
                 "usage: sortex-localsort [--algo A[,A...]] [--dist D[,D...]] [--n N]\n"
                 "         [--threads T[,T...]] [--reps R] [--warmup W] [--runs P]\n"
                 "         [--skew equal|zipf] [--touch pre|first] [--csv [--cpu-time]]\n"
                 "  algos: sortex merge qsort std gnu_parallel pretouch pretouch4k\n"
                 "  dists: uniform few sorted reverse nearly radix\n");
}

int parse(int argc, char **argv, options &o)
{
    static const char *const algos[] = {"sortex", "merge", "qsort", "std", "gnu_parallel",
                                        "pretouch", "pretouch4k", nullptr};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        }
        if (a == "--csv") {
            o.csv = true;
            continue;
        }
        if (a == "--cpu-time") {
            o.cpu = true;
            continue;
        }
        if (i + 1 >= argc) {
            return util_error("option needs a value (%s)", a.c_str());
        }
        const char *v = argv[++i];
        long x;
        if (a == "--algo") {
            o.algos = split_list(v);
            for (auto &s : o.algos) {
                if (!known(algos, s)) {
                    return util_error("unknown algorithm (%s)", s.c_str());
                }
            }
        } else if (a == "--dist") {
            o.dists = split_list(v);
            for (auto &s : o.dists) {
                if (!known(dists, s)) {
                    return util_error("unknown distribution (%s)", s.c_str());
                }
            }
        } else if (a == "--threads") {
            o.threads.clear();
            for (auto &s : split_list(v)) {
                if (util_parse_int(s.c_str(), 1, 1024, &x) != 0) {
                    return util_error("bad thread count (%s)", s.c_str());
                }
                o.threads.push_back(x);
            }
        } else if (a == "--n") {
            if (util_parse_count(v, &o.n) != 0) {
                return util_error("bad key count (%s)", v);
            }
        } else if (a == "--reps") {
            if (util_parse_int(v, 1, 1000000, &o.reps) != 0) {
                return util_error("bad repetition count (%s)", v);
            }
        } else if (a == "--warmup") {
            if (util_parse_int(v, 0, 1000, &o.warmup) != 0) {
                return util_error("bad warm-up count (%s)", v);
            }
        } else if (a == "--runs") {
            if (util_parse_int(v, 1, 1 << 20, &o.runs) != 0) {
                return util_error("bad run count (%s)", v);
            }
        } else if (a == "--skew") {
            o.skew = v;
            if (o.skew != "equal" && o.skew != "zipf") {
                return util_error("unknown skew (%s)", v);
            }
        } else if (a == "--touch") {
            o.touch = v;
            if (o.touch != "pre" && o.touch != "first") {
                return util_error("unknown touch mode (%s)", v);
            }
        } else {
            return util_error("unknown option (%s)", a.c_str());
        }
    }
    for (auto &s : o.algos) {
        if (s == "merge" && o.runs == 0) {
            return util_error("--algo merge needs --runs (%s)", "0");
        }
    }
    return 0;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// CPU seconds used by the whole process so far (all threads).
double cpu_now()
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Times one page-touch of a fresh buffer of @bytes (huge pages or 4 KiB pages).
double time_pretouch(size_t bytes, int threads, bool huge)
{
    void *p = util_alloc_big(bytes);
    if (p == nullptr) {
        return -1;
    }
#ifdef MADV_NOHUGEPAGE
    if (!huge) {
        size_t rounded = (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
        (void)madvise(p, rounded ? rounded : (2u << 20), MADV_NOHUGEPAGE);
    }
#endif
    double t0 = util_now();
    util_pretouch(p, bytes, threads);
    double t = util_now() - t0;
    util_free_big(p);
    return t;
}

} // namespace

int main(int argc, char **argv)
{
    util_set_progname("sortex-localsort");
    options o;
    if (parse(argc, argv, o) != 0) {
        usage(stderr);
        return UTIL_EXIT_USAGE;
    }
    size_t n = o.n;
    size_t bytes = n * sizeof(uint64_t);
    long maxt = *std::max_element(o.threads.begin(), o.threads.end());
    int gen_threads = (int)std::max<long>(maxt, omp_get_num_procs());

    uint64_t *orig = static_cast<uint64_t *>(util_alloc_big(bytes));
    uint64_t *keys = static_cast<uint64_t *>(util_alloc_big(bytes));
    uint64_t *scratch = static_cast<uint64_t *>(util_alloc_big(bytes));
    if (orig == nullptr || keys == nullptr || scratch == nullptr) {
        util_fail(UTIL_ENOMEM, "cannot allocate 3 x %zu bytes", bytes);
        return UTIL_EXIT_RUNTIME;
    }
    util_pretouch(orig, bytes, gen_threads);
    util_pretouch(keys, bytes, gen_threads);
    util_pretouch(scratch, bytes, gen_threads);

    std::vector<uint64_t> counts;
    if (o.runs > 0) {
        counts = run_sizes(n, (int)o.runs, o.skew);
    }

    if (o.csv) {
        char host[256] = "unknown";
        (void)gethostname(host, sizeof(host) - 1);
        std::printf("# sortex-localsort: host=%s cpus=%d commit=%s allocator=%s\n", host,
                    omp_get_num_procs(), util_commit(), util_allocator_name());
        std::printf("# n=%zu reps=%ld warmup=%ld runs=%ld skew=%s touch=%s\n", n, o.reps,
                    o.warmup, o.runs, o.skew.c_str(), o.touch.c_str());
        std::printf("algo,dist,n,threads,rep,seconds,mkeys_per_s%s\n", o.cpu ? ",cpu_seconds" : "");
    } else {
        std::printf("%-13s %-8s %12s %3s %5s %10s %10s %10s %9s\n", "algo", "dist", "n", "T", "runs",
                    "min_s", "median_s", "max_s", "Mkeys/s");
    }
    std::fflush(stdout);

    int failures = 0;
    for (const auto &dist : o.dists) {
        // The input of every repetition: generated once, runs sorted when asked.
        generate(orig, n, dist, 42, gen_threads);
        if (o.runs > 0) {
            size_t off = 0;
            for (uint64_t c : counts) {
                sortex_local_sort(orig + off, scratch + off, c, gen_threads);
                off += c;
            }
        }
        fingerprint want = fingerprint_of(orig, n, gen_threads);

        for (long t : o.threads) {
            std::vector<std::vector<double>> times(o.algos.size());
            for (long rep = -o.warmup; rep < o.reps; rep++) {
                for (size_t ai = 0; ai < o.algos.size(); ai++) {
                    const std::string &algo = o.algos[ai];
                    int threads = (int)t;
                    double secs, cpu = 0;
                    const uint64_t *result = keys;
                    if (algo == "pretouch" || algo == "pretouch4k") {
                        secs = time_pretouch(bytes, threads, algo == "pretouch");
                    } else {
                        std::memcpy(keys, orig, bytes);
                        uint64_t *scr = scratch;
                        if (o.touch == "first") {
                            scr = static_cast<uint64_t *>(util_alloc_big(bytes));
                            if (scr == nullptr) {
                                util_fail(UTIL_ENOMEM, "cannot allocate %zu bytes", bytes);
                                return UTIL_EXIT_RUNTIME;
                            }
                        }
                        int rc = 0;
                        double c0 = cpu_now();
                        double t0 = util_now();
                        if (algo == "sortex") {
                            rc = sortex_local_sort(keys, scr, n, threads);
                        } else if (algo == "merge") {
                            rc = sortex_merge_runs(keys, counts.data(), (int)o.runs, scr,
                                                   threads);
                            result = scr;
                        } else if (algo == "qsort") {
                            std::qsort(keys, n, sizeof(*keys), cmp_u64);
                        } else if (algo == "std") {
                            std::sort(keys, keys + n);
                        } else {
                            omp_set_num_threads(threads);
                            __gnu_parallel::sort(keys, keys + n,
                                                 __gnu_parallel::multiway_mergesort_tag());
                        }
                        secs = util_now() - t0;
                        cpu = cpu_now() - c0;
                        if (rc != 0) {
                            util_fail(rc, "%s failed (%d)", algo.c_str(), rc);
                            failures++;
                        }
                        if (!is_sorted_par(result, n, gen_threads) ||
                            !(fingerprint_of(result, n, gen_threads) == want)) {
                            util_fail(UTIL_EIO, "%s on %s: output is not a sorted permutation",
                                      algo.c_str(), dist.c_str());
                            failures++;
                        }
                        if (scr != scratch) {
                            if (result == scr) {
                                std::memcpy(keys, scr, bytes);
                            }
                            util_free_big(scr);
                        }
                    }
                    if (rep < 0) {
                        continue;
                    }
                    times[ai].push_back(secs);
                    if (o.csv) {
                        std::printf("%s,%s,%zu,%ld,%ld,%.6f,%.3f", algo.c_str(), dist.c_str(), n, t,
                                    rep, secs, secs > 0 ? (double)n / secs / 1e6 : 0.0);
                        if (o.cpu) {
                            std::printf(",%.6f", cpu);
                        }
                        std::printf("\n");
                        std::fflush(stdout);
                    }
                }
            }
            if (!o.csv) {
                for (size_t ai = 0; ai < o.algos.size(); ai++) {
                    auto &v = times[ai];
                    double med = median(v);
                    std::printf("%-13s %-8s %12zu %3ld %5ld %10.4f %10.4f %10.4f %9.1f\n",
                                o.algos[ai].c_str(), dist.c_str(), n, t, o.runs,
                                *std::min_element(v.begin(), v.end()), med,
                                *std::max_element(v.begin(), v.end()), (double)n / med / 1e6);
                }
                std::fflush(stdout);
            }
        }
    }
    util_free_big(scratch);
    util_free_big(keys);
    util_free_big(orig);
    return failures ? UTIL_EXIT_INVALID : UTIL_EXIT_OK;
}
