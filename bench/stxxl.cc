/*
 * bench/stxxl.cc: bin/sortex-stxxl, the external sort users compare sortex with: STXXL's sorter
 * (Dementiev, Kettner and Sanders, "STXXL: standard template library for XXL data sets",
 * Software: Practice and Experience 38(6), 2008; Debian's libstxxl-dev 1.4), which forms
 * sorted runs in its memory and merges them, on one node and one process.
 *
 * It sorts a file of u64 keys or gensort records into another with a given memory, through a
 * temporary file of STXXL's in a given directory (its "disk", created, grown and unlinked by
 * STXXL), and prints one CSV line: the format, the records, the memory, the seconds end to end
 * (reading the input to the output closed), and the peak resident set. The external suite of
 * bench/run runs it beside sortex on the same file with the same memory, and checks its output
 * with sortex-verify.
 */
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

#include <stxxl/sorter>

namespace {

struct key_less {
    bool operator()(uint64_t a, uint64_t b) const { return a < b; }
    uint64_t min_value() const { return 0; }
    uint64_t max_value() const { return UINT64_MAX; }
};

/* A gensort record: 100 bytes, ordered by its first 10 as unsigned bytes. */
struct record {
    unsigned char b[100];
};

struct record_less {
    bool operator()(const record &x, const record &y) const { return memcmp(x.b, y.b, 10) < 0; }
    record min_value() const
    {
        record r;
        memset(r.b, 0x00, sizeof(r.b));
        return r;
    }
    record max_value() const
    {
        record r;
        memset(r.b, 0xff, sizeof(r.b));
        return r;
    }
};

void usage(FILE *f)
{
    fprintf(f, "usage: sortex-stxxl --input IN --output OUT --mem BYTES [--format u64|gensort]\n"
               "                    [--temp-dir DIR]\n"
               "\n"
               "Sorts IN into OUT with STXXL's sorter given BYTES of memory (its runs and its\n"
               "merge each get them), its temporary file in DIR [the output's directory], and\n"
               "prints format,records,mem_bytes,seconds,peak_rss_kib.\n"
               "exit codes: 0 sorted; 2 usage error; 3 I/O failure\n");
}

/* Reads the input in 8 MiB blocks into the sorter, sorts, and writes the output. */
template <typename T, typename Less>
int run(FILE *in, FILE *out, uint64_t mem, uint64_t *n)
{
    stxxl::sorter<T, Less> s(Less(), mem);
    const size_t block = (8u << 20) / sizeof(T);
    T *buf = static_cast<T *>(malloc(block * sizeof(T)));
    if (buf == nullptr) {
        return 3;
    }
    size_t got;
    *n = 0;
    while ((got = fread(buf, sizeof(T), block, in)) > 0) {
        for (size_t i = 0; i < got; i++) {
            s.push(buf[i]);
        }
        *n += got;
    }
    int rc = ferror(in) ? 3 : 0;
    s.sort();
    size_t fill = 0;
    for (; rc == 0 && !s.empty(); ++s) {
        buf[fill++] = *s;
        if (fill == block) {
            rc = fwrite(buf, sizeof(T), fill, out) == fill ? 0 : 3;
            fill = 0;
        }
    }
    if (rc == 0 && fill > 0 && fwrite(buf, sizeof(T), fill, out) != fill) {
        rc = 3;
    }
    free(buf);
    return rc;
}

struct args {
    const char *input = nullptr, *output = nullptr, *format = "u64", *temp = nullptr;
    uint64_t mem = 0;
    bool records = false;
};

/* The command line into @a: 0, 1 after --help, or 2 after one line on a mistake. */
int parse(int argc, char **argv, args *a)
{
    for (int i = 1; i < argc; i++) {
        std::string o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (o == "-h" || o == "--help") {
            usage(stdout);
            return 1;
        }
        if (v == nullptr) {
            fprintf(stderr, "sortex-stxxl: error: option needs a value (%s)\n", argv[i]);
            return 2;
        }
        if (o == "--input") {
            a->input = v;
        } else if (o == "--output") {
            a->output = v;
        } else if (o == "--mem") {
            char *end;
            errno = 0;
            a->mem = strtoull(v, &end, 10);
            if (errno != 0 || *end != '\0' || a->mem < (1u << 20)) {
                fprintf(stderr, "sortex-stxxl: error: --mem must be at least 1048576 bytes "
                                "(%s)\n", v);
                return 2;
            }
        } else if (o == "--format") {
            a->format = v;
        } else if (o == "--temp-dir") {
            a->temp = v;
        } else {
            fprintf(stderr, "sortex-stxxl: error: unknown option (%s); see --help\n", argv[i]);
            return 2;
        }
        i++;
    }
    a->records = std::string(a->format) == "gensort";
    if (a->input == nullptr || a->output == nullptr || a->mem == 0 ||
        (!a->records && std::string(a->format) != "u64")) {
        fprintf(stderr, "sortex-stxxl: error: --input, --output and --mem are required, "
                        "--format u64 or gensort (%s)\n", a->format);
        return 2;
    }
    return 0;
}

/* STXXL's disk: a file in --temp-dir (else the output's directory) that grows as needed and is
 * unlinked when opened; its messages go to /dev/null (it prints them on standard output). The
 * configuration file's name into @cfg (removed by the caller), or 3 after one line. */
int configure(const args &a, std::string *cfg)
{
    std::string dir = a.temp != nullptr ? a.temp : std::string(a.output);
    if (a.temp == nullptr) {
        size_t slash = dir.rfind('/');
        dir = slash == std::string::npos ? "." : dir.substr(0, slash);
    }
    *cfg = dir + "/.sortex-stxxl." + std::to_string(getpid()) + ".cfg";
    FILE *c = fopen(cfg->c_str(), "w");
    if (c == nullptr) {
        fprintf(stderr, "sortex-stxxl: error: cannot write %s: %s\n", cfg->c_str(),
                strerror(errno));
        return 3;
    }
    fprintf(c, "disk=%s/.sortex-stxxl.%ld.tmp,0,syscall unlink\n", dir.c_str(), (long)getpid());
    fclose(c);
    setenv("STXXLCFG", cfg->c_str(), 1);
    setenv("STXXLLOGFILE", "/dev/null", 1);
    setenv("STXXLERRLOGFILE", "/dev/null", 1);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    args a;
    int rc = parse(argc, argv, &a);
    if (rc != 0) {
        return rc == 1 ? 0 : rc;
    }
    const char *input = a.input, *output = a.output, *format = a.format;
    uint64_t mem = a.mem;
    std::string cfg;
    if ((rc = configure(a, &cfg)) != 0) {
        return rc;
    }

    auto t0 = std::chrono::steady_clock::now();
    FILE *in = fopen(input, "rb");
    FILE *out = fopen(output, "wb");
    rc = in != nullptr && out != nullptr ? 0 : 3;
    uint64_t n = 0;
    if (rc == 0) {
        rc = a.records ? run<record, record_less>(in, out, mem, &n)
                     : run<uint64_t, key_less>(in, out, mem, &n);
    }
    if (in != nullptr) {
        fclose(in);
    }
    if (out != nullptr && fclose(out) != 0) {
        rc = 3;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    unlink(cfg.c_str());
    if (rc != 0) {
        fprintf(stderr, "sortex-stxxl: error: I/O failed (%s -> %s)\n", input, output);
        return rc;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s,%llu,%llu,%.3f,%ld\n", format, (unsigned long long)n, (unsigned long long)mem, secs,
           ru.ru_maxrss);
    return 0;
}
