// bench/localsort.cc: sortex-localsort, the node-local kernels against the sorts users know,
// on keys made in memory by the project's own generator (datagen).
//
//   sortex-localsort --algo sortex,ips4o_par,vqsort --dist uniform,zipf --n 1Mi,1e8
//                    --threads 1,2 --reps 5 [--warmup 1] [--runs P --skew equal|zipf] [--csv]
//
// The algorithms are one table (kAlgos): the kernels under test (local_sort(),
// local_merge_runs()), the baselines users would pick instead (ips4o sequential and parallel,
// Highway's vqsort, Boost.Sort's block_indirect_sort and spreadsort, all from Debian), the
// references (glibc qsort, std::sort, __gnu_parallel::sort) and two page-touch probes. A
// sequential algorithm runs on one thread whatever --threads says, and says so in its rows.
//
// Every repetition starts from a pristine copy of the generated keys, so generation and copy
// are outside the timed region; the algorithms' repetitions are interleaved (A B A B ...) so
// that noise from other work on the machine hits all of them alike. After each repetition the
// output is checked: ascending, and the same multiset (count and two order-independent sums).
// --touch first hands the sort a fresh, never-touched scratch buffer each time (its page
// faults are then inside the timed region); the default touches it once beforehand.
//
// Output: with --csv one header line and one row per repetition (algo, dist, n, threads, runs,
// rep, seconds, mkeys_per_s[, cpu_seconds]), after '#' lines describing the machine (CPU model,
// every cache level, the compiler flags) and the parameters; otherwise
// a table of min / median / max per configuration. Exit status: 0, 1 when a check failed, 2 on
// bad usage, 3 when out of memory.

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <omp.h>

#include "bench/baselines.h"

extern "C" {
#include "datagen/datagen.h"
#include "local/local.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/cpu.h"
#include "util/format.h"
#include "util/util.h"
}

namespace {

// What one timed call gets: the keys, a scratch array of the same size, the thread count and,
// for the merge, the sorted runs. It returns the array that holds the result.
struct job {
    uint64_t *keys, *scratch;
    size_t n;
    int threads;
    const std::vector<uint64_t> *runs;
};

int cmp_u64(const void *p, const void *q)
{
    uint64_t a = *static_cast<const uint64_t *>(p), b = *static_cast<const uint64_t *>(q);
    return (a > b) - (a < b);
}

uint64_t *run_sortex(const job &j)
{
    return local_sort(j.keys, j.scratch, j.n, j.threads) == 0 ? j.keys : nullptr;
}

uint64_t *run_merge(const job &j)
{
    int rc = local_merge_runs(j.keys, j.runs->data(), (int)j.runs->size(), j.scratch, j.threads);
    return rc == 0 ? j.scratch : nullptr;
}

uint64_t *run_qsort(const job &j)
{
    std::qsort(j.keys, j.n, sizeof(*j.keys), cmp_u64);
    return j.keys;
}

uint64_t *run_std(const job &j)
{
    baselines::std_sort(j.keys, j.n);
    return j.keys;
}

uint64_t *run_gnu_parallel(const job &j)
{
    baselines::gnu_parallel(j.keys, j.n, j.threads);
    return j.keys;
}

uint64_t *run_ips4o(const job &j)
{
    baselines::ips4o(j.keys, j.n);
    return j.keys;
}

uint64_t *run_ips4o_par(const job &j)
{
    baselines::ips4o_par(j.keys, j.n, j.threads);
    return j.keys;
}

uint64_t *run_vqsort(const job &j)
{
    baselines::vqsort(j.keys, j.n);
    return j.keys;
}

uint64_t *run_boost_bis(const job &j)
{
    baselines::boost_bis(j.keys, j.n, j.threads);
    return j.keys;
}

uint64_t *run_boost_spread(const job &j)
{
    baselines::boost_spread(j.keys, j.n);
    return j.keys;
}

struct algo {
    const char *name;
    const char *summary;
    bool threaded;   // uses --threads; otherwise one thread
    bool needs_runs; // sorts --runs sorted runs (the finish phase's input)
    uint64_t *(*run)(const job &);
};

// The page-touch probes are timed apart (run == nullptr): they measure fresh memory itself.
const algo kAlgos[] = {
    {"sortex", "local_sort(), the sort's kernel", true, false, run_sortex},
    {"merge", "local_merge_runs() (records: local_merge_record_runs()) of the --runs runs", true,
     true, run_merge},
    {"ips4o", "ips4o::sort, sequential (Debian libips4o-dev)", false, false, run_ips4o},
    {"ips4o_par", "ips4o::parallel::sort with --threads threads", true, false, run_ips4o_par},
    {"vqsort", "Highway's vqsort, sequential (Debian libhwy-dev)", false, false, run_vqsort},
    {"boost_bis", "Boost.Sort block_indirect_sort with --threads", true, false, run_boost_bis},
    {"boost_spread", "Boost.Sort spreadsort (integer_sort), sequential", false, false,
     run_boost_spread},
    {"qsort", "glibc qsort", false, false, run_qsort},
    {"std", "C++ std::sort", false, false, run_std},
    {"gnu_parallel", "libstdc++ __gnu_parallel::sort (multiway mergesort)", true, false,
     run_gnu_parallel},
    {"pretouch", "first touch of a fresh huge-page buffer of n keys", true, false, nullptr},
    {"pretouch4k", "first touch of a fresh 4 KiB-page buffer of n keys", true, false, nullptr},
};

const algo *find_algo(const std::string &name)
{
    for (const algo &a : kAlgos) {
        if (name == a.name) {
            return &a;
        }
    }
    return nullptr;
}

// splitmix64 finaliser: the order-independent multiset sums of the check.
uint64_t mix(uint64_t x)
{
    return util_splitmix64(&x); /* one step of splitmix64 from state x */
}

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

// The items of the comma separated list @s given to option @what, into @out; an empty item, or
// an empty list, is refused with one line (util_split_list(), as every program does).
int split_list(const char *s, const char *what, std::vector<std::string> &out)
{
    std::vector<char> buf(std::strlen(s) + 1);
    std::vector<char *> items(buf.size());
    int n = 0;
    if (util_split_list(s, what, buf.data(), buf.size(), items.data(), (int)items.size(), &n) !=
        0) {
        return UTIL_EUSAGE;
    }
    out.assign(items.begin(), items.begin() + n);
    return 0;
}

// --skew: the sizes of the runs.
enum skew { SKEW_EQUAL, SKEW_ZIPF, SKEW_COUNT };
const struct util_name kSkews[] = {{"equal", SKEW_EQUAL}, {"zipf", SKEW_ZIPF}, {nullptr, 0}};

// --touch: when the scratch buffer is touched.
enum touch { TOUCH_PRE, TOUCH_FIRST, TOUCH_COUNT };
const struct util_name kTouches[] = {{"pre", TOUCH_PRE}, {"first", TOUCH_FIRST}, {nullptr, 0}};

// Run sizes: equal, or Zipf-like (run r gets a share proportional to 1 / (r + 1)).
std::vector<uint64_t> run_sizes(size_t n, int runs, int skew)
{
    std::vector<uint64_t> c(static_cast<size_t>(runs), 0);
    double total = 0;
    for (int r = 0; r < runs; r++) {
        total += skew == SKEW_ZIPF ? 1.0 / (r + 1) : 1.0;
    }
    size_t given = 0;
    for (int r = 0; r < runs; r++) {
        double w = (skew == SKEW_ZIPF ? 1.0 / (r + 1) : 1.0) / total;
        c[r] = r + 1 == runs ? n - given : std::min<size_t>(n - given, (size_t)(w * (double)n));
        given += c[r];
    }
    return c;
}

// The options of one value: the fields the command-line table's rows fill (a standard-layout
// struct, so that the rows may name them by offset).
struct settings {
    long reps = 5;
    long warmup = 1;
    long runs = 0;
    uint64_t ranks = 4;
    uint64_t seed = 42;
    uint64_t unique = 1000;
    int skew = SKEW_EQUAL;
    int touch = TOUCH_PRE;
    const struct util_format *format = nullptr; // nullptr or a numeric format: 8-byte keys
    bool csv = false;
    bool cpu = false;
};

// Every option: those of one value, and the lists, which their parse functions fill.
struct options : settings {
    std::vector<std::string> algos{"sortex"};
    std::vector<std::string> dists{"uniform"};
    std::vector<uint64_t> sizes{1000000};
    std::vector<long> threads{1};
};

void list_algos(FILE *out)
{
    std::fprintf(out, "algorithms (--algo NAME):\n");
    for (const algo &a : kAlgos) {
        std::fprintf(out, "%-13s %s%s\n", a.name, a.summary, a.threaded ? "" : " (one thread)");
    }
}

// The options of a list as the table's parse functions see them: the whole options.
options &all(void *dest)
{
    return *static_cast<options *>(static_cast<settings *>(dest));
}

// --algo A[,A...], or 'help' (lists them and exits).
int parse_algos(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    if (std::strcmp(arg, "help") == 0) {
        list_algos(stdout);
        return UTIL_CLI_DONE;
    }
    options &o = all(dest);
    if (split_list(arg, "--algo", o.algos) != 0) {
        return UTIL_EUSAGE;
    }
    for (auto &s : o.algos) {
        if (find_algo(s) == nullptr) {
            return util_cli_error(opt, s.c_str(), "unknown algorithm ({arg}); see --algo help");
        }
    }
    return 0;
}

// --dist D[,D...].
int parse_dists(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    options &o = all(dest);
    if (split_list(arg, "--dist", o.dists) != 0) {
        return UTIL_EUSAGE;
    }
    for (auto &s : o.dists) {
        if (datagen_find(s.c_str()) == nullptr) {
            return util_cli_error(opt, s.c_str(),
                                  "unknown distribution ({arg}); see sortex-gen --list");
        }
    }
    return 0;
}

// --n N[,N...]: counts in the row's range.
int parse_sizes(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    options &o = all(dest);
    std::vector<std::string> items;
    o.sizes.clear();
    if (split_list(arg, "--n", items) != 0) {
        return UTIL_EUSAGE;
    }
    for (auto &s : items) {
        uint64_t v;
        if (util_cli_get_count(opt, s.c_str(), &v) != 0) {
            return UTIL_EUSAGE;
        }
        o.sizes.push_back(v);
    }
    return 0;
}

// --threads T[,T...]: integers in the row's range.
int parse_threads(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)quiet;
    options &o = all(dest);
    std::vector<std::string> items;
    o.threads.clear();
    if (split_list(arg, "--threads", items) != 0) {
        return UTIL_EUSAGE;
    }
    for (auto &s : items) {
        long x;
        if (util_cli_get_int(opt, s.c_str(), &x) != 0) {
            return UTIL_EUSAGE;
        }
        o.threads.push_back(x);
    }
    return 0;
}

// --format NAME: a named format (no layouts: the records mode makes its own records).
int parse_format(const struct util_cli_opt *opt, const char *arg, void *dest, bool quiet)
{
    (void)opt;
    (void)quiet;
    const struct util_format *f = util_format_find(arg);
    if (f == nullptr) {
        char names[128];
        util_format_names(names, sizeof(names));
        return util_error("unknown format (%s); valid: %s", arg, names);
    }
    static_cast<settings *>(dest)->format = f;
    return 0;
}

void usage(FILE *out);

#define DEST(field) UTIL_CLI_DEST(settings, field)

// The options, in the order --help gives them (the fields of each row in their declared order,
// as C++ designated initializers must be). The fields a row leaves out are zero, as in C; g++
// would warn about each.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
// clang-format off
const struct util_cli_opt kOptions[] = {
    {.name = "algo", .key = 'a', .arg = "A[,A...]", .def = "sortex",
     .help = "algorithms [{def}]; 'help' lists them", .parse = parse_algos},
    {.name = "dist", .key = 'd', .arg = "D[,D...]", .def = "uniform",
     .help = "distributions of sortex-gen --list [{def}]", .parse = parse_dists},
    {.name = "n", .key = 'n', .arg = "N[,N...]", .def = "1000000",
     .help = "key counts; K M G and Ki Mi Gi suffixes [{def}]", .parse = parse_sizes, .min = 1,
     .max = (uint64_t)1 << 34, .err = "{opt} must be counts from 1 to 2^34 ({arg})"},
    {.name = "threads", .key = 't', .arg = "T[,T...]", .def = "1",
     .help = "threads of the threaded algorithms [{def}]", .parse = parse_threads, .min = 1,
     .max = 1024, .err = "{opt} must be integers from {min} to {max} ({arg})"},
    {.name = "reps", .key = 'r', .arg = "R", .def = "5", .help = "timed repetitions [{def}]",
     .parse = util_cli_int, DEST(reps), .min = 1, .max = 1000000},
    {.name = "warmup", .arg = "W", .def = "1", .help = "untimed repetitions first [{def}]",
     .parse = util_cli_int, DEST(warmup), .min = 0, .max = 1000},
    {.name = "ranks", .arg = "P", .def = "4",
     .help = "the generator's P (per-rank distributions) [{def}]", .parse = util_cli_count,
     DEST(ranks), .min = 1, .max = DATAGEN_MAX_RANKS,
     .err = "{opt} must be a count from 1 to 2^24 ({arg})"},
    {.name = "seed", .arg = "S", .def = "42", .help = "the generator's seed [{def}]",
     .parse = util_cli_count, DEST(seed), .min = 0, .max = UINT64_MAX,
     .err = "{opt} must be a non-negative integer ({arg})"},
    {.name = "unique", .arg = "K", .def = "1000", .help = "distinct values of 'few' [{def}]",
     .parse = util_cli_count, DEST(unique), .min = 1, .max = UINT64_MAX,
     .err = "{opt} must be a positive count ({arg})"},
    {.name = "runs", .arg = "R", .def = "0",
     .help = "the input is R sorted runs (the finish phase's input;\n"
             "'merge' needs it, 'sortex' then re-sorts them) [{def}]",
     .parse = util_cli_int, DEST(runs), .min = 1, .max = 1 << 20,
     .err = "{opt} must be an integer from 1 to 2^20 ({arg})"},
    {.name = "skew", .arg = "equal|zipf", .def = "equal",
     .help = "run sizes with --runs [{def}]", .parse = util_cli_enum, DEST(skew),
     .names = kSkews},
    {.name = "format", .arg = "NAME", .def = "u64: keys",
     .help = "records instead of 8-byte keys: gensort (100-byte\n"
             "records, random bytes; algorithms sortex, ips4o,\n"
             "ips4o_par, std; with --runs sortex and merge, on\n"
             "records at the sort's 8-byte stride) [{def}]",
     .parse = parse_format},
    {.name = "touch", .arg = "pre|first", .def = "pre",
     .help = "scratch touched once before (pre) or fresh in every\n"
             "repetition, its page faults timed (first) [{def}]",
     .parse = util_cli_enum, DEST(touch), .names = kTouches},
    {.name = "csv", .help = "one CSV row per repetition, machine in '#' lines",
     .parse = util_cli_flag, DEST(csv)},
    {.name = "cpu-time", .help = "add the CPU seconds of all threads to each row",
     .parse = util_cli_flag, DEST(cpu)},
    UTIL_CLI_HELP(usage, "this help"),
    UTIL_CLI_VERSION("version, commit and build"),
    {},
};
// clang-format on
#pragma GCC diagnostic pop

#undef DEST

const struct util_cli kCommandLine = UTIL_CLI_COMMAND(kOptions, 26);

void usage(FILE *out)
{
    std::fprintf(out, "usage: sortex-localsort [options]\n"
                      "\n"
                      "Times the node-local sort kernels against the sorts users know, on keys "
                      "made\n"
                      "in memory by the project's generator; every output is checked.\n"
                      "\n"
                      "options (default in brackets; lists are comma separated):\n");
    util_cli_help(out, &kCommandLine);
    std::fprintf(out, "\n"
                      "exit codes: 0 every output checked; 1 a check failed; 2 usage error;\n"
                      "            3 out of memory\n");
}

// Parses argv into @o. Returns 0, UTIL_CLI_DONE (--help, --version, --algo help), or
// UTIL_EUSAGE.
int parse(int argc, char **argv, options &o)
{
    int rc = util_cli_parse(&kCommandLine, argc, argv, static_cast<settings *>(&o), false);
    if (rc != 0) {
        return rc;
    }
    for (auto &s : o.algos) {
        if (find_algo(s)->needs_runs && o.runs == 0) {
            return util_error("--algo %s needs --runs (%s)", s.c_str(), "0");
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

// Fills a[0..n) with distribution @dist by datagen (its 'few' with @o.unique values).
int generate(uint64_t *a, size_t n, const std::string &dist, const options &o, int threads)
{
    struct datagen_params p;
    datagen_params_init(&p);
    p.dist = datagen_find(dist.c_str());
    p.n = n;
    p.ranks = o.ranks < n ? o.ranks : n;
    p.seed = o.seed;
    p.unique = o.unique;
    if (datagen_check(&p) != 0) {
        return UTIL_EUSAGE;
    }
    return datagen_fill_threads(&p, 0, n, a, threads);
}

// ---- records -------------------------------------------------------------------------------

uint64_t record_hash(const unsigned char *r, size_t R)
{
    uint64_t h = 0x243f6a8885a308d3ULL;
    for (size_t i = 0; i < R; i += 8) {
        uint64_t w = 0;
        std::memcpy(&w, r + i, R - i < 8 ? R - i : 8);
        h = mix(h ^ w);
    }
    return h;
}

// Ascending by key and the same multiset of whole records as @want (sum of record hashes).
bool records_ok(const unsigned char *r, size_t n, const struct util_format *f, uint64_t want,
                int threads)
{
    size_t R = f->record_size;
    int bad = 0;
    uint64_t sum = 0;
#pragma omp parallel for num_threads(threads) reduction(| : bad) reduction(+ : sum)
    for (size_t i = 0; i < n; i++) {
        sum += record_hash(r + i * R, R);
        bad |= i > 0 && util_format_cmp(f, r + (i - 1) * R, r + i * R) > 0;
    }
    return !bad && sum == want;
}

// The records mode's buffers, each for the largest --n.
struct record_bufs {
    unsigned char *orig, *rec, *scr;
    struct local_rec_tuple *tup;
};

// The input of every repetition of @n records of format @f: random records in b.orig, with
// --runs in sorted runs whose sizes go to @counts. Returns 0, or UTIL_EXIT_RUNTIME.
int make_records(const options &o, const struct util_format *f, const record_bufs &b, uint64_t n,
                 int gen_threads, std::vector<uint64_t> &counts)
{
    size_t R = f->record_size;
#pragma omp parallel for num_threads(gen_threads)
    for (size_t i = 0; i < n * R; i += 8) {
        uint64_t w = mix(o.seed * 0x9e3779b97f4a7c15ULL + i);
        std::memcpy(b.orig + i, &w, n * R - i < 8 ? n * R - i : 8);
    }
    if (o.runs > 0) {
        counts = run_sizes(n, (int)o.runs, o.skew);
        size_t off = 0;
        for (uint64_t c : counts) {
            void *sorted = nullptr;
            if (local_record_sort(b.orig + off * R, b.scr, b.tup, c, f, gen_threads, &sorted) !=
                0) {
                return util_fail(UTIL_ENOMEM, "cannot sort the runs"), UTIL_EXIT_RUNTIME;
            }
            if (sorted != b.orig + off * R) {
                std::memcpy(b.orig + off * R, sorted, c * R);
            }
            off += c;
        }
    }
    return 0;
}

// Sorts the @n records of b.rec with algorithm @a on @threads threads; *@result is where they
// are then, a failure of the sort counts in *@failures. Returns 0, or UTIL_EXIT_USAGE when @a
// does not sort these records.
int sort_records(const options &o, const std::string &a, const struct util_format *f,
                 const record_bufs &b, uint64_t n, int threads,
                 const std::vector<uint64_t> &counts, const unsigned char **result,
                 int *failures)
{
    size_t R = f->record_size;
    *result = b.rec;
    if (o.runs > 0 && a != "sortex" && a != "merge") {
        return util_error("--algo %s does not take --runs of records", a.c_str()),
               UTIL_EXIT_USAGE;
    }
    if (a == "merge") {
        if (local_merge_record_runs(b.rec, counts.data(), (int)o.runs, b.scr, f, threads) != 0) {
            (*failures)++;
        }
        *result = b.scr;
    } else if (a == "sortex") {
        void *sorted = nullptr;
        if (local_record_sort(b.rec, b.scr, b.tup, n, f, threads, &sorted) != 0) {
            (*failures)++;
        }
        *result = static_cast<const unsigned char *>(sorted);
    } else if (R == 100 && a == "ips4o") {
        baselines::ips4o_rec100(b.rec, n);
    } else if (R == 100 && a == "ips4o_par") {
        baselines::ips4o_par_rec100(b.rec, n, threads);
    } else if (R == 100 && a == "std") {
        baselines::std_stable_rec100(b.rec, n);
    } else {
        return util_error("--algo %s does not sort %s records", a.c_str(), f->name),
               UTIL_EXIT_USAGE;
    }
    return 0;
}

// The records mode's input of one size.
struct record_input {
    const record_bufs *b;
    const struct util_format *f; // at the stride the sorts see
    size_t file_r;               // the records' size in a file, for the MB/s
    uint64_t n;
    const std::vector<uint64_t> *counts; // --runs: the sorted runs' sizes
    uint64_t want;                       // the sum of the record hashes of every output
    int gen_threads;
};

// Every record algorithm on @in with every --threads, repetitions interleaved; a CSV row each,
// or a table row per algorithm. Returns 0, or UTIL_EXIT_USAGE.
int run_records_input(const options &o, const record_input &in, int *failures)
{
    size_t R = in.f->record_size;
    uint64_t n = in.n;
    for (long t : o.threads) {
        std::vector<std::vector<double>> times(o.algos.size());
        for (long rep = -o.warmup; rep < o.reps; rep++) {
            for (size_t ai = 0; ai < o.algos.size(); ai++) {
                const std::string &a = o.algos[ai];
                int threads = (a == "ips4o" || a == "std") ? 1 : (int)t;
                std::memcpy(in.b->rec, in.b->orig, n * R);
                const unsigned char *result;
                double c0 = cpu_now(), t0 = util_now();
                int rc = sort_records(o, a, in.f, *in.b, n, threads, *in.counts, &result, failures);
                if (rc != 0) {
                    return rc;
                }
                double secs = util_now() - t0, cpu = cpu_now() - c0;
                if (!records_ok(result, n, in.f, in.want, in.gen_threads)) {
                    util_fail(UTIL_EIO, "%s: output is not a sorted permutation", a.c_str());
                    (*failures)++;
                }
                if (rep < 0) {
                    continue;
                }
                times[ai].push_back(secs);
                if (o.csv) {
                    std::printf("%s,%s,%llu,%d,%ld,%ld,%.6f,%.3f", a.c_str(), in.f->name,
                                (unsigned long long)n, threads, o.runs, rep, secs, n / secs / 1e6);
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
                double med = median(times[ai]);
                std::printf("%-13s %-9s %12llu %3ld %5ld %10.4f s %9.1f Mrec/s %8.0f MB/s\n",
                            o.algos[ai].c_str(), in.f->name, (unsigned long long)n, t, o.runs,
                            med, n / med / 1e6, n * (double)in.file_r / med / 1e6);
            }
        }
    }
    return 0;
}

// The records mode: random records of format @o.format, the record sorts compared. With
// --runs P the input is P runs, each sorted stably, of records at the sort's memory stride
// (the record rounded up to 8 bytes), which is what the finish phase gets: 'sortex' re-sorts
// them (local_record_sort()), 'merge' merges them (local_merge_record_runs()).
int run_records(const options &o)
{
    struct util_format fs = *o.format;
    if (o.runs > 0) {
        fs.record_size = (fs.record_size + 7) / 8 * 8;
    }
    const struct util_format *f = &fs;
    const size_t file_r = o.format->record_size; // the MB/s are of the records themselves
    size_t R = f->record_size, nmax = *std::max_element(o.sizes.begin(), o.sizes.end());
    int gen_threads = std::max(omp_get_num_procs(), 1);
    record_bufs b;
    b.orig = static_cast<unsigned char *>(util_alloc_big(nmax * R));
    b.rec = static_cast<unsigned char *>(util_alloc_big(nmax * R));
    b.scr = static_cast<unsigned char *>(util_alloc_big(nmax * R));
    b.tup = static_cast<struct local_rec_tuple *>(
        util_alloc_big(2 * nmax * sizeof(struct local_rec_tuple)));
    if (!b.orig || !b.rec || !b.scr || !b.tup) {
        util_fail(UTIL_ENOMEM, "cannot allocate the records (%zu bytes)", 3 * nmax * R);
        return UTIL_EXIT_RUNTIME;
    }
    for (auto *buf : {b.orig, b.rec, b.scr}) {
        util_pretouch(buf, nmax * R, gen_threads);
    }
    util_pretouch(b.tup, 2 * nmax * sizeof(*b.tup), gen_threads);
    std::printf("# cpu: %s\n", util_cpu_describe());
    if (o.csv) {
        std::printf("algo,dist,n,threads,runs,rep,seconds,mkeys_per_s%s\n",
                    o.cpu ? ",cpu_seconds" : "");
    }
    int failures = 0;
    for (uint64_t n : o.sizes) {
        std::vector<uint64_t> counts;
        int rc = make_records(o, f, b, n, gen_threads, counts);
        if (rc != 0) {
            return rc;
        }
        uint64_t want = 0;
#pragma omp parallel for num_threads(gen_threads) reduction(+ : want)
        for (size_t i = 0; i < n; i++) {
            want += record_hash(b.orig + i * R, R);
        }
        record_input in{&b, f, file_r, n, &counts, want, gen_threads};
        if ((rc = run_records_input(o, in, &failures)) != 0) {
            return rc;
        }
    }
    util_free_big(b.tup);
    util_free_big(b.scr);
    util_free_big(b.rec);
    util_free_big(b.orig);
    return failures ? UTIL_EXIT_INVALID : UTIL_EXIT_OK;
}

// The keys mode's header: '#' lines and the CSV's columns, or the table's.
void print_keys_header(const options &o)
{
    if (o.csv) {
        char host[256] = "unknown";
        (void)gethostname(host, sizeof(host) - 1);
        std::printf("# sortex-localsort: host=%s commit=%s allocator=%s\n", host, util_commit(),
                    util_allocator_name());
        std::printf("# cpu: %s\n", util_cpu_describe());
        std::printf("# build: library %s; baselines g++ %s\n", util_build_flags(), __VERSION__);
        std::printf("# reps=%ld warmup=%ld runs=%ld skew=%s touch=%s ranks=%llu seed=%llu "
                    "unique=%llu\n",
                    o.reps, o.warmup, o.runs, util_name_of(kSkews, o.skew),
                    util_name_of(kTouches, o.touch), (unsigned long long)o.ranks,
                    (unsigned long long)o.seed, (unsigned long long)o.unique);
        std::printf("algo,dist,n,threads,runs,rep,seconds,mkeys_per_s%s\n",
                    o.cpu ? ",cpu_seconds" : "");
    } else {
        std::printf("# cpu: %s\n", util_cpu_describe());
        std::printf("%-13s %-9s %12s %3s %5s %10s %10s %10s %9s\n", "algo", "dist", "n", "T",
                    "runs", "min_s", "median_s", "max_s", "Mkeys/s");
    }
    std::fflush(stdout);
}

// The keys mode's input of one size and distribution, and its buffers.
struct key_input {
    uint64_t *orig, *keys, *scratch;
    size_t n;
    const std::vector<uint64_t> *counts; // --runs: the sorted runs' sizes
    fingerprint want;                    // of orig, what every output must hold
    const std::string *dist;
    int gen_threads;
};

// One repetition of algorithm @al with @threads threads on @in: its seconds and CPU seconds
// into *@secs and *@cpu, its output checked (a failure counts in *@failures). Returns 0, or
// UTIL_EXIT_RUNTIME when a fresh scratch buffer cannot be had.
int time_keys(const options &o, const algo &al, const key_input &in, int threads, double *secs,
              double *cpu, int *failures)
{
    size_t nbytes = in.n * sizeof(uint64_t);
    *cpu = 0;
    if (al.run == nullptr) {
        *secs = time_pretouch(nbytes, threads, std::strcmp(al.name, "pretouch") == 0);
        return 0;
    }
    std::memcpy(in.keys, in.orig, nbytes);
    uint64_t *scr = in.scratch;
    if (o.touch == TOUCH_FIRST) {
        scr = static_cast<uint64_t *>(util_alloc_big(nbytes));
        if (scr == nullptr) {
            util_fail(UTIL_ENOMEM, "cannot allocate %zu bytes", nbytes);
            return UTIL_EXIT_RUNTIME;
        }
    }
    job j{in.keys, scr, in.n, threads, in.counts};
    double c0 = cpu_now();
    double t0 = util_now();
    const uint64_t *result = al.run(j);
    *secs = util_now() - t0;
    *cpu = cpu_now() - c0;
    if (result == nullptr) {
        util_fail(UTIL_EIO, "%s failed", al.name);
        (*failures)++;
    } else if (!is_sorted_par(result, in.n, in.gen_threads) ||
               !(fingerprint_of(result, in.n, in.gen_threads) == in.want)) {
        util_fail(UTIL_EIO, "%s on %s: output is not a sorted permutation", al.name,
                  in.dist->c_str());
        (*failures)++;
    }
    if (scr != in.scratch) {
        util_free_big(scr);
    }
    return 0;
}

// Every algorithm on @in with every --threads, repetitions interleaved; a CSV row each, or a
// table row per algorithm. Returns 0, or UTIL_EXIT_RUNTIME.
int run_keys_input(const options &o, const key_input &in, int *failures)
{
    for (long t : o.threads) {
        std::vector<std::vector<double>> times(o.algos.size());
        for (long rep = -o.warmup; rep < o.reps; rep++) {
            for (size_t ai = 0; ai < o.algos.size(); ai++) {
                const algo &al = *find_algo(o.algos[ai]);
                int threads = al.threaded ? (int)t : 1;
                double secs, cpu;
                int rc = time_keys(o, al, in, threads, &secs, &cpu, failures);
                if (rc != 0) {
                    return rc;
                }
                if (rep < 0) {
                    continue;
                }
                times[ai].push_back(secs);
                if (o.csv) {
                    std::printf("%s,%s,%llu,%d,%ld,%ld,%.6f,%.3f", al.name, in.dist->c_str(),
                                (unsigned long long)in.n, threads, o.runs, rep, secs,
                                secs > 0 ? (double)in.n / secs / 1e6 : 0.0);
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
                const algo &al = *find_algo(o.algos[ai]);
                auto &v = times[ai];
                double med = median(v);
                std::printf("%-13s %-9s %12llu %3ld %5ld %10.4f %10.4f %10.4f %9.1f\n", al.name,
                            in.dist->c_str(), (unsigned long long)in.n, al.threaded ? t : 1L,
                            o.runs, *std::min_element(v.begin(), v.end()), med,
                            *std::max_element(v.begin(), v.end()), (double)in.n / med / 1e6);
            }
            std::fflush(stdout);
        }
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    util_set_progname("sortex-localsort");
    util_check_stdout_at_exit();
    options o;
    int rc = parse(argc, argv, o);
    if (rc != 0) {
        return rc == UTIL_CLI_DONE ? UTIL_EXIT_OK : UTIL_EXIT_USAGE;
    }
    if (o.format != nullptr && o.format->byte_key) {
        return run_records(o);
    }
    size_t nmax = *std::max_element(o.sizes.begin(), o.sizes.end());
    size_t bytes = nmax * sizeof(uint64_t);
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
    print_keys_header(o);

    int failures = 0;
    for (uint64_t n : o.sizes) {
        std::vector<uint64_t> counts;
        if (o.runs > 0) {
            counts = run_sizes(n, (int)o.runs, o.skew);
        }
        for (const auto &dist : o.dists) {
            // The input of every repetition: generated once, runs sorted when asked.
            if (generate(orig, n, dist, o, gen_threads) != 0) {
                return UTIL_EXIT_USAGE;
            }
            if (o.runs > 0) {
                size_t off = 0;
                for (uint64_t c : counts) {
                    local_sort(orig + off, scratch + off, c, gen_threads);
                    off += c;
                }
            }
            key_input in{orig,  keys, scratch, n, &counts, fingerprint_of(orig, n, gen_threads),
                         &dist, gen_threads};
            if ((rc = run_keys_input(o, in, &failures)) != 0) {
                return rc;
            }
        }
    }
    util_free_big(scratch);
    util_free_big(keys);
    util_free_big(orig);
    return failures ? UTIL_EXIT_INVALID : UTIL_EXIT_OK;
}
