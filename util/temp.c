/* util/temp.c: temporary names, their creation, and their removal on signals (see temp.h). */
#include "util/temp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/util.h"

/* What every temporary name adds to the final one: ".NAME" + SUFFIX + TAG. */
#define SUFFIX ".sortex-tmp."
#define SUFFIX_LEN (sizeof(SUFFIX) - 1)

/* Names of at most this many bytes are assumed when the directory cannot be asked. */
#define NAME_MAX_DEFAULT 255

/* Length of the directory part of @path, its last slash included (0: the current directory). */
static size_t dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) + 1 : 0;
}

/* The longest file name the directory of @path takes. */
static long name_max(const char *path)
{
    size_t len = dir_len(path);
    long m = -1;
    if (len == 0) {
        m = pathconf(".", _PC_NAME_MAX);
    } else {
        char *dir = util_malloc(len + 1);
        if (dir != NULL) {
            memcpy(dir, path, len);
            dir[len] = '\0';
            m = pathconf(dir, _PC_NAME_MAX);
            util_free(dir);
        }
    }
    return m > 0 ? m : NAME_MAX_DEFAULT;
}

int util_temp_fits(const char *final, long *limit)
{
    size_t dlen = dir_len(final);
    size_t blen = strlen(final) - dlen;
    long nmax = name_max(final);
    /* The final name itself, then the shortest temporary name (".sortex-tmp.TAG"). */
    if ((long)blen > nmax || (long)(SUFFIX_LEN + UTIL_TEMP_TAG_MAX) > nmax) {
        *limit = nmax;
        return UTIL_EUSAGE;
    }
    if (strlen(final) >= PATH_MAX || dlen + SUFFIX_LEN + UTIL_TEMP_TAG_MAX >= PATH_MAX) {
        *limit = PATH_MAX - 1;
        return UTIL_EUSAGE;
    }
    return UTIL_OK;
}

char *util_temp_name(const char *final, const char *tag)
{
    size_t dlen = dir_len(final);
    const char *base = final + dlen;
    size_t blen = strlen(base), tlen = strlen(tag);
    long nmax = name_max(final);

    /* Keep as much of NAME as both the name and the path limit allow: "." + NAME + SUFFIX +
     * TAG must fit the directory's longest name, and the whole path PATH_MAX - 1. */
    long keep = (long)blen;
    long by_name = nmax - 1 - (long)(SUFFIX_LEN + tlen);
    long by_path = (long)PATH_MAX - 1 - (long)(dlen + 1 + SUFFIX_LEN + tlen);
    keep = keep < by_name ? keep : by_name;
    keep = keep < by_path ? keep : by_path;
    if (keep <= 0) {
        /* No room for any of NAME: ".sortex-tmp.TAG", if that fits. */
        if ((long)(SUFFIX_LEN + tlen) > nmax || dlen + SUFFIX_LEN + tlen >= PATH_MAX) {
            return NULL;
        }
        keep = 0;
    }
    size_t len = dlen + 1 + (size_t)keep + SUFFIX_LEN + tlen + 1;
    char *name = util_malloc(len);
    if (name == NULL) {
        return NULL;
    }
    if (keep > 0) {
        (void)snprintf(name, len, "%.*s.%.*s" SUFFIX "%s", (int)dlen, final, (int)keep, base, tag);
    } else {
        (void)snprintf(name, len, "%.*s" SUFFIX "%s", (int)dlen, final, tag);
    }
    return name;
}

/* Attempts of util_temp_create() before it gives up (names left by crashed runs of this PID). */
#define TEMP_ATTEMPTS 100

int util_temp_create(const char *final, char **name)
{
    *name = NULL;
    for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++) {
        char tag[UTIL_TEMP_TAG_MAX + 1];
        (void)snprintf(tag, sizeof(tag), "%ld.%d", (long)getpid(), attempt);
        char *tmp = util_temp_name(final, tag);
        if (tmp == NULL) {
            errno = errno == ENOMEM ? ENOMEM : ENAMETOOLONG;
            return -1;
        }
        util_temp_track(tmp); /* before it exists: no signal finds it untracked */
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *name = tmp;
            return fd;
        }
        int e = errno;
        util_temp_done(tmp);
        util_free(tmp);
        if (e != EEXIST) {
            errno = e;
            return -1;
        }
    }
    errno = EEXIST;
    return -1;
}

FILE *util_temp_fopen(const char *final, char **name)
{
    int fd = util_temp_create(final, name);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL && fd >= 0) {
        int e = errno;
        (void)close(fd);
        (void)util_temp_remove(*name);
        util_free(*name);
        *name = NULL;
        errno = e;
    }
    return f;
}

int util_temp_fclose(FILE *f, const char *path, const char *final)
{
    int bad = ferror(f);
    errno = 0;
    bad = fclose(f) != 0 || bad;
    if (bad) {
        int rc = errno ? errno : EIO;
        (void)util_temp_remove(path);
        return rc;
    }
    return util_temp_commit(path, final);
}

int util_temp_space(int fd, uint64_t bytes, uint64_t *avail)
{
    struct statvfs vfs;
    *avail = 0;
    if (fstatvfs(fd, &vfs) != 0) {
        return 0; /* nothing to judge by: the writes will tell */
    }
    uint64_t blocks = geteuid() == 0 ? (uint64_t)vfs.f_bfree : (uint64_t)vfs.f_bavail;
    *avail = blocks * (uint64_t)vfs.f_frsize;
    return *avail < bytes ? ENOSPC : 0;
}

int util_temp_reserve(int fd, uint64_t bytes)
{
    uint64_t avail;
    if (bytes == 0) {
        return 0;
    }
    if (fallocate(fd, 0, 0, (off_t)bytes) == 0) {
        return 0;
    }
    if (errno != EOPNOTSUPP && errno != ENOSYS) {
        return errno;
    }
    return util_temp_space(fd, bytes, &avail); /* no reservation: at least refuse what cannot fit */
}

/* The files a signal handler removes: each with a descriptor of its directory (or -1: the
 * path alone) and its last component. A handler reads these slots and nothing else; a slot is
 * filled before its path is published and emptied path first. */
#define TRACK_SLOTS 4
static struct {
    const char *volatile path;
    volatile int dirfd;
    const char *volatile base;
} tracked[TRACK_SLOTS];

/* A descriptor of the directory holding @path (O_PATH: it opens nothing for reading), or -1. */
static int open_dir_of(const char *path)
{
    size_t len = dir_len(path);
    char dir[PATH_MAX];
    if (len == 0) {
        return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (len >= sizeof(dir)) {
        return -1;
    }
    memcpy(dir, path, len);
    dir[len] = '\0';
    return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

void util_temp_track(const char *path)
{
    for (int i = 0; i < TRACK_SLOTS; i++) {
        if (tracked[i].path == NULL) {
            tracked[i].dirfd = open_dir_of(path);
            tracked[i].base = path + dir_len(path);
            tracked[i].path = path;
            return;
        }
    }
}

/* The slot tracking @path, or -1. */
static int slot_of(const char *path)
{
    for (int i = 0; path != NULL && i < TRACK_SLOTS; i++) {
        if (tracked[i].path == path) {
            return i;
        }
    }
    return -1;
}

void util_temp_done(const char *path)
{
    int i = slot_of(path);
    if (i >= 0) {
        int fd = tracked[i].dirfd;
        tracked[i].path = NULL;
        tracked[i].dirfd = -1;
        if (fd >= 0) {
            (void)close(fd);
        }
    }
}

/* unlink() of a tracked file through its directory's descriptor (or its path): 0 or errno. */
static int unlink_tracked(int i, const char *path)
{
    int rc = i >= 0 && tracked[i].dirfd >= 0 ? unlinkat(tracked[i].dirfd, tracked[i].base, 0)
                                             : unlink(path);
    return rc == 0 || errno == ENOENT ? 0 : errno;
}

int util_temp_remove(const char *path)
{
    int rc = unlink_tracked(slot_of(path), path);
    util_temp_done(path);
    return rc;
}

int util_temp_commit(const char *path, const char *final)
{
    int i = slot_of(path), rc = 0;
    if (i < 0 || tracked[i].dirfd < 0) {
        rc = rename(path, final) == 0 ? 0 : errno; /* untracked: by path alone */
    } else {
        /* The directory at @final's path must still be the one the file was made in. */
        struct stat here, made;
        int dirfd = tracked[i].dirfd, fd = open_dir_of(final);
        if (fd < 0 || fstat(fd, &here) != 0 || fstat(dirfd, &made) != 0 ||
            here.st_dev != made.st_dev || here.st_ino != made.st_ino) {
            rc = UTIL_TEMP_EMOVED;
        } else if (renameat(dirfd, tracked[i].base, dirfd, final + dir_len(final)) != 0) {
            rc = errno;
        }
        if (fd >= 0) {
            (void)close(fd);
        }
    }
    if (rc != 0) {
        (void)unlink_tracked(i, path);
    }
    util_temp_done(path);
    return rc;
}

const char *util_temp_strerror(int code)
{
    if (code == UTIL_TEMP_EMOVED) {
        return "the output directory was moved or replaced while the file was written";
    }
    return strerror(code);
}

/* Removes the tracked files (unlink is async-signal-safe), then dies of the same signal. */
static void on_signal(int sig)
{
    for (int i = 0; i < TRACK_SLOTS; i++) {
        const char *p = tracked[i].path;
        if (p != NULL) {
            int fd = tracked[i].dirfd;
            (void)(fd >= 0 ? unlinkat(fd, tracked[i].base, 0) : unlink(p));
        }
    }
    (void)signal(sig, SIG_DFL);
    (void)raise(sig);
}

void util_temp_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        sigaddset(&sa.sa_mask, sigs[i]); /* one handler at a time */
    }
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        (void)sigaction(sigs[i], &sa, NULL);
    }
    (void)signal(SIGPIPE, SIG_IGN);
    (void)signal(SIGXFSZ, SIG_IGN);
}
