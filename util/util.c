/* util/util.c: errors, number parsing, file checks and clocks (see util.h). */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/fs.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/knobs.h"
#include "util/temp.h"

static const char *progname = "sortex";

void util_set_progname(const char *name)
{
    progname = name;
}

const char *util_progname(void)
{
    return progname;
}

int util_launch_rank(void)
{
    /* Open MPI's own variable, then the process-management interfaces, then Slurm's; the first
     * that is set and reads as a rank holds. */
    static const enum util_knob vars[] = {UTIL_KNOB_OMPI_RANK, UTIL_KNOB_PMIX_RANK,
                                          UTIL_KNOB_PMI_RANK, UTIL_KNOB_SLURM_RANK};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const struct util_knob_value *v = util_knob(vars[i]);
        if (v->valid) {
            return (int)v->value;
        }
    }
    return 0;
}

int util_exit_code(int err)
{
    switch (err) {
    case UTIL_OK:
        return UTIL_EXIT_OK;
    case UTIL_EUSAGE:
        return UTIL_EXIT_USAGE;
    default:
        return UTIL_EXIT_RUNTIME;
    }
}

/* Deferred reporting (util_report_defer()): the first error line of this process waits here. */
static bool defer_on;
static int pending_taken; /* claimed atomically: the first failing thread keeps the slot */
static char pending[1024];
static size_t pending_len;

/* One line on stderr, written with a single call so that lines from ranks do not interleave;
 * an error line is kept instead while reports are deferred. */
static void vreport(const char *kind, bool error, const char *fmt, va_list ap)
{
    char line[sizeof(pending)];
    int n = snprintf(line, sizeof(line), "%s: %s: ", progname, kind);
    if (n < 0 || (size_t)n >= sizeof(line)) {
        n = 0;
    }
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2) {
        len = sizeof(line) - 2;
    }
    line[len++] = '\n';
    if (error && defer_on) {
        if (__atomic_exchange_n(&pending_taken, 1, __ATOMIC_ACQ_REL) == 0) {
            memcpy(pending, line, len);
            pending_len = len;
        }
        return;
    }
    (void)fwrite(line, 1, len, stderr);
    (void)fflush(stderr);
}

void util_report_defer(bool on)
{
    defer_on = on;
}

bool util_report_deferring(void)
{
    return defer_on;
}

bool util_report_pending(void)
{
    return __atomic_load_n(&pending_taken, __ATOMIC_ACQUIRE) != 0;
}

void util_report_release(bool print)
{
    if (util_report_pending()) {
        if (print) {
            (void)fwrite(pending, 1, pending_len, stderr);
            (void)fflush(stderr);
        }
        pending_len = 0;
        __atomic_store_n(&pending_taken, 0, __ATOMIC_RELEASE);
    }
}

int util_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", true, fmt, ap);
    va_end(ap);
    return UTIL_EUSAGE;
}

int util_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", true, fmt, ap);
    va_end(ap);
    return err;
}

void util_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning", false, fmt, ap);
    va_end(ap);
}

int util_parse_count(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') {
        return UTIL_EUSAGE; /* empty, a sign, white space or garbage */
    }
    /* Plain digits first: exact for the whole uint64 range. */
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE) {
        return UTIL_EUSAGE;
    }
    uint64_t mult = 1;
    if (*end == 'e' || *end == 'E') {
        /* 1e6, 25e5: a small decimal exponent. */
        char *e2 = NULL;
        errno = 0;
        long ex = strtol(end + 1, &e2, 10);
        if (e2 == end + 1 || errno == ERANGE || ex < 0 || ex > 19 || end[1] < '0' ||
            end[1] > '9') {
            return UTIL_EUSAGE;
        }
        for (long i = 0; i < ex; i++) {
            mult *= 10;
        }
        end = e2;
    } else if (*end != '\0') {
        static const char units[] = "KMGTP";
        const char *u = strchr(units, *end);
        if (u == NULL) {
            return UTIL_EUSAGE;
        }
        int power = (int)(u - units) + 1;
        bool binary = end[1] == 'i';
        for (int i = 0; i < power; i++) {
            mult *= binary ? 1024 : 1000;
        }
        end += binary ? 2 : 1;
    }
    if (*end != '\0') {
        return UTIL_EUSAGE;
    }
    if (v != 0 && mult > UINT64_MAX / v) {
        return UTIL_EUSAGE;
    }
    *out = (uint64_t)v * mult;
    return UTIL_OK;
}

int util_parse_int(const char *s, long lo, long hi, long *out)
{
    if (s == NULL || (*s != '-' && (*s < '0' || *s > '9'))) {
        return UTIL_EUSAGE;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        return UTIL_EUSAGE;
    }
    *out = v;
    return UTIL_OK;
}

int util_parse_double(const char *s, double lo, double hi, double *out)
{
    if (s == NULL || (*s != '-' && *s != '.' && (*s < '0' || *s > '9'))) {
        return UTIL_EUSAGE;
    }
    /* Decimal only: strtod would also take hex floats (0x1p-3), "inf" and "nan". */
    if (strpbrk(s, "xXpPiInN") != NULL) {
        return UTIL_EUSAGE;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo || v > hi) {
        return UTIL_EUSAGE;
    }
    *out = v;
    return UTIL_OK;
}

int util_split_list(const char *text, const char *what, char *buf, size_t cap, char **items,
                    int max, int *n)
{
    *n = 0;
    if (strlen(text) >= cap) {
        return util_error("%s list too long: at most %zu characters (%s)", what, cap - 1, text);
    }
    strcpy(buf, text);
    /* Cut at every comma; strtok would skip empty items silently. */
    for (char *item = buf;;) {
        char *comma = strchr(item, ',');
        if (comma != NULL) {
            *comma = '\0';
        }
        if (*item == '\0') {
            return util_error("%s list has an empty item (%s)", what, text);
        }
        if (*n == max) {
            return util_error("%s list has more than %d items (%s)", what, max, text);
        }
        items[(*n)++] = item;
        if (comma == NULL) {
            return UTIL_OK;
        }
        item = comma + 1;
    }
}

int util_name_find(const struct util_name *names, const char *name)
{
    for (int i = 0; names[i].name != NULL; i++) {
        if (strcmp(names[i].name, name) == 0) {
            return names[i].value;
        }
    }
    return -1;
}

const char *util_name_of(const struct util_name *names, int v)
{
    for (int i = 0; names[i].name != NULL; i++) {
        if (names[i].value == v) {
            return names[i].name;
        }
    }
    return "?";
}

void util_names_join(const struct util_name *names, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; names[i].name != NULL && used < cap; i++) {
        const char *sep = i == 0 ? "" : names[i + 1].name == NULL ? " or " : ", ";
        int k = snprintf(buf + used, cap - used, "%s%s", sep, names[i].name);
        used += k > 0 ? (size_t)k : 0;
    }
}

/* The atexit() handler of util_check_stdout_at_exit(). */
static void check_stdout(void)
{
    errno = 0;
    int failed = fflush(stdout) != 0, e = errno;
    if (failed || ferror(stdout)) {
        util_fail(UTIL_EIO, "cannot write standard output%s%s", e ? ": " : "", e ? strerror(e) : "");
        _exit(UTIL_EXIT_RUNTIME);
    }
}

void util_check_stdout_at_exit(void)
{
    (void)atexit(check_stdout);
}

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int util_check_input(const char *path, const char *what, size_t record, uint64_t *size)
{
    struct stat st;
    if (path == NULL || *path == '\0') {
        return util_error("no %s file given", what);
    }
    if (stat(path, &st) != 0) {
        return util_error("cannot open %s: %s (%s)", what, strerror(errno), path);
    }
    if (S_ISDIR(st.st_mode)) {
        return util_error("%s is a directory (%s)", what, path);
    }
    if (!S_ISREG(st.st_mode)) {
        return util_error("%s is not a regular file (%s)", what, path);
    }
    if (access(path, R_OK) != 0) {
        return util_error("cannot read %s: %s (%s)", what, strerror(errno), path);
    }
    if ((uint64_t)st.st_size % record != 0) {
        return util_error("%s size %lld is not a multiple of %zu bytes (%s)", what,
                          (long long)st.st_size, record, path);
    }
    *size = (uint64_t)st.st_size;
    return UTIL_OK;
}

/* Copies the directory part of @path ("." when there is none) into @dir. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        (void)snprintf(dir, cap, ".");
    } else if (slash == path) {
        (void)snprintf(dir, cap, "/");
    } else {
        (void)snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    }
}

/* The inode flags (chattr) of @path: FS_APPEND_FL and FS_IMMUTABLE_FL matter here. 0 when the
 * file system has none to tell. */
static int inode_flags(const char *path)
{
    int flags = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0) {
        if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
            flags = 0;
        }
        (void)close(fd);
    }
    return flags;
}

int util_check_output(const char *path)
{
    char dir[PATH_MAX];
    struct stat st;
    if (path == NULL || *path == '\0') {
        return util_error("no output file given");
    }
    /* A path the system cannot take at all: said as such, not as a directory that is missing
     * (its directory part would not fit in dir, and stat() fails on it with ENAMETOOLONG). */
    if (strlen(path) >= PATH_MAX) {
        return util_error("output name is too long: at most %d characters (%s)", PATH_MAX - 1,
                          path);
    }
    if (path[strlen(path) - 1] == '/') {
        return util_error("output is a directory (%s)", path);
    }
    /* The output is replaced by renaming a new file over it: that must never turn a device, a
     * FIFO or a socket into a data file, nor replace a symbolic link instead of its target. */
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            return util_error("output is a symbolic link; name its target instead (%s)", path);
        }
        if (S_ISDIR(st.st_mode)) {
            return util_error("output is a directory (%s)", path);
        }
        if (!S_ISREG(st.st_mode)) {
            return util_error("output exists and is not a regular file (%s)", path);
        }
    }
    dir_of(path, dir, sizeof(dir));
    if (stat(dir, &st) != 0 && errno == ENAMETOOLONG) {
        return util_error("output name is too long: a directory name in it passes the file "
                          "system's limit (%s)",
                          path);
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return util_error("output directory does not exist (%s)", dir);
    }
    if (access(dir, W_OK | X_OK) != 0) {
        return util_error("output directory is not writable (%s)", dir);
    }
    /* An append-only directory (chattr +a) takes new files but lets none be renamed or removed:
     * the temporary file could neither become the output nor go away, and nor could the probe
     * files MPI-IO makes beside it. An immutable output cannot be replaced. Refused before
     * anything is created. */
    if (inode_flags(dir) & (FS_APPEND_FL | FS_IMMUTABLE_FL)) {
        return util_error("output directory is append-only or immutable: no file could be "
                          "renamed or removed in it (%s)", dir);
    }
    if (lstat(path, &st) == 0 && (inode_flags(path) & (FS_APPEND_FL | FS_IMMUTABLE_FL))) {
        return util_error("output is append-only or immutable and cannot be replaced (%s)", path);
    }
    /* Refused now rather than after the work: a name the directory cannot hold. */
    long limit = 0;
    if (util_temp_fits(path, &limit) != UTIL_OK) {
        return util_error("output name is too long: at most %ld characters here (%s)", limit,
                          path);
    }
    return UTIL_OK;
}

const char *util_bad_option(char *const argv[], char *buf, size_t len)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "";
    bool long_with_value = strncmp(arg, "--", 2) == 0 && strchr(arg, '=') != NULL;
    if (optopt <= 0 || optopt > 126 || !isprint(optopt) || long_with_value) {
        return arg;
    }
    (void)snprintf(buf, len, "-%c", optopt);
    return buf;
}

/* stat() of the directory holding @path (its text up to the last slash). */
static int parent_stat(const char *path, struct stat *st)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        return stat(".", st);
    }
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    char *dir = util_malloc(len + 1);
    if (dir == NULL) {
        return -1;
    }
    memcpy(dir, path, len);
    dir[len] = '\0';
    int rc = stat(dir, st);
    util_free(dir);
    return rc;
}

int util_file_id_get(const char *path, struct util_file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        return UTIL_EIO;
    }
    id->dev = (uint64_t)st.st_dev;
    id->ino = (uint64_t)st.st_ino;
    id->size = (uint64_t)st.st_size;
    id->mtime_sec = (int64_t)st.st_mtim.tv_sec;
    id->mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
    id->ctime_sec = (int64_t)st.st_ctim.tv_sec;
    id->ctime_nsec = (int64_t)st.st_ctim.tv_nsec;
    return UTIL_OK;
}

bool util_file_id_same(const struct util_file_id *a, const struct util_file_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec &&
           a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

bool util_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) {
        return false;
    }
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool util_same_path(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa), eb = stat(b, &sb);
    if (ea == 0 && eb == 0) {
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    }
    if (ea == 0 || eb == 0) {
        return false; /* one exists, the other does not */
    }
    /* Neither exists yet: the same name in the same directory would become the same file. */
    const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
    ba = ba ? ba + 1 : a;
    bb = bb ? bb + 1 : b;
    if (strcmp(ba, bb) != 0 || parent_stat(a, &sa) != 0 || parent_stat(b, &sb) != 0) {
        return false;
    }
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int util_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
