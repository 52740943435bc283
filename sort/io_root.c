/*
 * sort/io_root.c: root I/O, for clusters without a shared filesystem and for pipes. Rank 0 is
 * the only reader and writer; the slices travel by a combining binomial-tree scatter and return
 * by the reverse combining gather (or, to compare, by MPI_Scatterv and MPI_Gatherv).
 *
 * Scheme (combining one-to-all scatter on the spanning binomial tree, after the study notes
 * "Combining OAS: lower bounds, algorithms, and their latencies", [OAS] in the README): in round
 * k = ceil(log2 P)-1 .. 0 every rank that holds data for ranks [r, r + 2^(k+1)) hands its
 * partner r + 2^k the bundle for the partner's subtree [r + 2^k, r + 2^(k+1)). Slices are
 * contiguous in file order, so a bundle is one contiguous range: no packing. Cost:
 * ceil(log2 P) start-ups and n (1 - 1/P) keys leaving the root, halving each round; every key
 * moves about log2(P)/2 times. The gather runs the same tree backwards; rank 0 receives the
 * bundles in increasing rank order (1, then 2-3, then 4-7, ...), so it writes each one as it
 * arrives and never holds more than half the output besides its own slice.
 *
 * Records: the file, the messages and the buffers all hold them back to back, R bytes each; a
 * message counts them in the job's element datatype (R bytes), so a bundle is never split.
 *
 * Memory: rank 0 holds the whole input once (standard input cannot be re-read); an inner tree
 * node holds its subtree's bundle while forwarding it. Every rank makes its room before the
 * first message and all agree on it, so a rank short of memory fails the job cleanly instead of
 * leaving its parent or children blocked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sort/internal.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

/* The element as MPI moves it: one MPI_UINT64_T for 8-byte numbers, R bytes for records (the
 * job's own datatype), and its size. */
struct shape {
    MPI_Datatype type;
    size_t rsize;
};

static struct shape shape_of(const struct sort_job *job)
{
    return (struct shape){job->mem_type, job->rsize};
}

/* Elements of @extent bytes one MPI call may carry: the int limit (bytes) in whole elements,
 * at least one. */
static uint64_t call_elems(size_t extent)
{
    uint64_t c = exchange_chunk_bytes(extent) / extent;
    return c > 0 ? c : 1;
}

/* Point-to-point transfers of any size: chunks of at most the MPI int limit, @count elements
 * of @type, @extent bytes apart. */
static int send_elems(const void *buf, uint64_t count, MPI_Datatype type, size_t extent, int dest,
                      MPI_Comm comm)
{
    uint64_t limit = call_elems(extent);
    for (uint64_t off = 0; off < count; off += limit) {
        uint64_t c = count - off < limit ? count - off : limit;
        if (MPI_Send((const char *)buf + off * extent, (int)c, type, dest, SORT_TAG_IO_TREE,
                     comm) != MPI_SUCCESS) {
            return UTIL_EMPI;
        }
    }
    return UTIL_OK;
}

static int recv_elems(void *buf, uint64_t count, MPI_Datatype type, size_t extent, int src,
                      MPI_Comm comm)
{
    uint64_t limit = call_elems(extent);
    for (uint64_t off = 0; off < count; off += limit) {
        uint64_t c = count - off < limit ? count - off : limit;
        if (MPI_Recv((char *)buf + off * extent, (int)c, type, src, SORT_TAG_IO_TREE, comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return UTIL_EMPI;
        }
    }
    return UTIL_OK;
}

/* Writes all of buf to fd, retrying short writes. */
static int write_all(int fd, const void *buf, size_t bytes)
{
    const char *p = buf;
    while (bytes > 0) {
        ssize_t w = write(fd, p, bytes);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return w < 0 ? -errno : -ENOSPC;
        }
        p += w;
        bytes -= (size_t)w;
    }
    return 0;
}

/* read() of up to @len bytes, retried when interrupted; the count or a negative errno. */
static ssize_t read_some(int fd, void *buf, size_t len)
{
    ssize_t r;
    do {
        r = read(fd, buf, len);
    } while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : r;
}

/* Reads the whole of fd into job->stage, growing it; returns bytes read or a negative errno.
 * A full buffer is grown only when a small probe read finds more data, so a file read with
 * its size as @hint is held once, never copied into a bigger buffer. */
static int64_t read_all(struct sort_job *job, int fd, uint64_t hint)
{
    uint64_t bytes = 0, cap = hint > 0 ? hint : ((uint64_t)1 << 20);
    char probe[4096];
    job->stage = util_alloc_big(cap);
    if (job->stage == NULL) {
        return -ENOMEM;
    }
    for (;;) {
        if (bytes == cap) {
            /* Never more than the buffer's size, so that after doubling it holds what came. */
            ssize_t more = read_some(fd, probe, sizeof(probe) < cap ? sizeof(probe) : cap);
            if (more <= 0) {
                if (more < 0) {
                    return more;
                }
                break; /* end of input exactly at the buffer's end */
            }
            /* Standard input of unknown size, or a file that grew: double the buffer. */
            uint64_t *bigger = util_alloc_big(2 * cap);
            if (bigger == NULL) {
                return -ENOMEM;
            }
            memcpy(bigger, job->stage, bytes);
            memcpy((char *)bigger + bytes, probe, (size_t)more);
            util_free_big(job->stage);
            job->stage = bigger;
            cap *= 2;
            bytes += (uint64_t)more;
            continue;
        }
        ssize_t r = read(fd, (char *)job->stage + bytes, cap - bytes);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return -errno;
        }
        if (r == 0) {
            break;
        }
        bytes += (uint64_t)r;
    }
    job->stage_cap = cap; /* bytes */
    return (int64_t)bytes;
}

/*
 * Standard output of rank 0. Under Open MPI's mpirun a rank's standard output is forwarded by
 * mpirun, which writes it to its own standard output and never tells the rank how that went: a
 * full disk or /dev/full loses the data with exit 0, and a pipe whose reader has gone (`| head`)
 * makes mpirun abort after ten SIGPIPEs, crashing as it does. So when rank 0 was started by
 * mpirun itself on this host (Open MPI names mpirun as the local daemon, and it is the parent
 * process), rank 0 writes into mpirun's standard output directly, where every error is its own
 * to report: a pipe or device through a descriptor of its own, a regular file through mpirun's
 * very descriptor (pidfd_getfd(), which shares its offset, so that whatever the shell writes
 * after the job lands behind the output), or one of its own when that descriptor appends.
 *
 * mpirun's descriptor 1 is the job's standard output only if mpirun was given one: started with
 * standard output closed (`>&-`), mpirun reuses descriptor 1 for a pipe of its own (the read
 * end of its signal pipe), whose bytes it takes for signal numbers. A descriptor 1 that is not
 * open for writing, or a pipe whose other end mpirun holds itself, is refused: standard output
 * is closed, and the write fails as it would without mpirun (EBADF).
 *
 * Elsewhere (srun, MPICH's launcher, a rank 0 on another host, a socket) it writes to its own
 * standard output, through the launcher's forwarding, whose errors are the launcher's.
 */

/* The flags mpirun's descriptor @fd was opened with (/proc/PID/fdinfo), or -1. */
static int parent_fd_flags(long pid, int fd)
{
    char path[64], line[128];
    (void)snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%d", pid, fd);
    FILE *f = fopen(path, "re");
    int flags = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        unsigned v;
        if (sscanf(line, "flags: %o", &v) == 1) {
            flags = (int)v;
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return flags;
}

/* The file offset of mpirun's descriptor @fd (/proc/PID/fdinfo), or 0. */
static long long parent_fd_pos(long pid, int fd)
{
    char path[64], line[128];
    (void)snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%d", pid, fd);
    FILE *f = fopen(path, "re");
    long long pos = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "pos: %lld", &pos) == 1) {
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return pos;
}

/* Whether process @pid holds, besides its descriptor @fd, a readable descriptor on the inode
 * @st: the read end of its own pipe. */
static int parent_reads_too(long pid, int fd, const struct stat *st)
{
    char path[64];
    (void)snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
    DIR *d = opendir(path);
    int found = 0;
    for (struct dirent *e; d != NULL && !found && (e = readdir(d)) != NULL;) {
        char *end;
        long other = strtol(e->d_name, &end, 10);
        if (*end != '\0' || end == e->d_name || other == fd) {
            continue;
        }
        char link[96];
        struct stat o;
        (void)snprintf(link, sizeof(link), "%s/%ld", path, other);
        if (stat(link, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino) {
            int flags = parent_fd_flags(pid, (int)other);
            found = flags >= 0 && (flags & O_ACCMODE) != O_WRONLY;
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    return found;
}

/* Whether the parent process is Open MPI's mpirun, started on this host as the local daemon. */
static int parent_is_mpirun(long parent)
{
    const char *hnp = util_knob(UTIL_KNOB_HNP_URI)->text;
    const char *local = util_knob(UTIL_KNOB_DAEMON_URI)->text;
    if (hnp == NULL || local == NULL || strcmp(hnp, local) != 0) {
        return 0;
    }
    char path[64], exe[4096];
    (void)snprintf(path, sizeof(path), "/proc/%ld/exe", parent);
    ssize_t len = readlink(path, exe, sizeof(exe) - 1);
    if (len <= 0) {
        return 0;
    }
    exe[len] = '\0';
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    return strcmp(base, "orterun") == 0 || strcmp(base, "mpirun") == 0 ||
           strcmp(base, "mpiexec") == 0;
}

/* mpirun's very descriptor @fd (the same open file: offset and flags shared), or -1. */
static int parent_fd_dup(long pid, int fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (pidfd < 0) {
        return -1;
    }
    int got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    (void)close(pidfd);
    if (got >= 0) {
        (void)fcntl(got, F_SETFD, FD_CLOEXEC);
    }
    return got;
#else
    (void)pid;
    (void)fd;
    return -1;
#endif
}

int sort_root_stdout(void)
{
    long parent = (long)getppid();
    if (!parent_is_mpirun(parent)) {
        return STDOUT_FILENO;
    }
    char path[64];
    struct stat st;
    (void)snprintf(path, sizeof(path), "/proc/%ld/fd/1", parent);
    int flags = parent_fd_flags(parent, 1);
    if (stat(path, &st) != 0 || flags < 0 || (flags & O_ACCMODE) == O_RDONLY ||
        ((S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) && parent_reads_too(parent, 1, &st))) {
        errno = EBADF; /* closed when mpirun started: descriptor 1 is mpirun's own */
        return -1;
    }
    if (S_ISREG(st.st_mode)) {
        int fd = parent_fd_dup(parent, 1);
        if (fd < 0 && (flags & O_APPEND)) {
            fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        }
        return fd >= 0 ? fd : STDOUT_FILENO; /* no way to share its offset: forwarded */
    }
    if (S_ISSOCK(st.st_mode)) {
        return STDOUT_FILENO; /* a socket cannot be opened by its /proc name */
    }
    /* A pipe or a device: a descriptor of rank 0's own on the same one. Non-blocking to open,
     * so that a pipe whose reader has gone fails (ENXIO, said as EPIPE) instead of waiting. */
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO) {
            errno = EPIPE;
        }
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) {
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    return fd;
}

/*
 * Standard input of rank 0. Open MPI's mpirun forwards its standard input to rank 0 (its
 * default, `--stdin 0`) through a pipe; Open MPI 4.x's forwarding can crash mpirun itself
 * (SIGSEGV in orte_iof_hnp_read_local_handler, open-mpi/ompi#7483, fixed in 5.0), measured here
 * about once in a hundred sorts of a few hundred kB on a busy machine. With `mpirun --stdin none`
 * no rank is given standard input (every rank's is /dev/null) and mpirun never reads its own:
 * rank 0, when started by mpirun on this host, then reads mpirun's standard input itself, the
 * only reader, as if it had been started without mpirun. Collective: every rank says whether its
 * own standard input is /dev/null, since with `--stdin N` for another rank mpirun reads and
 * forwards it elsewhere, and a second reader would split the data.
 */

/* Whether descriptor @fd is /dev/null (or closed): no data was given to this process. */
static int fd_is_null(int fd)
{
    struct stat st, null;
    if (fstat(fd, &st) != 0) {
        return 1;
    }
    return S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev;
}

/* Rank 0's descriptor for the job's standard input, in *@fd (and whether it is one of its own
 * to close, in *@own); all ranks call it. Returns 0, or an error (on rank 0, reported). */
static int root_stdin(struct sort_job *job, int *fd, int *own)
{
    int null = fd_is_null(STDIN_FILENO), others = 1;
    int mine = job->rank == 0 ? 1 : null;
    MPI_Allreduce(&mine, &others, 1, MPI_INT, MPI_MIN, job->comm);
    *fd = STDIN_FILENO;
    *own = 0;
    if (job->rank != 0 || !null) {
        return UTIL_OK; /* forwarded to rank 0, or not under mpirun: its own */
    }
    long parent = (long)getppid();
    if (!parent_is_mpirun(parent)) {
        return UTIL_OK;
    }
    if (!others) {
        return util_fail(UTIL_EUSAGE, "rank 0: read: mpirun gives standard input to another "
                                      "rank; sortex reads it on rank 0 (mpirun --stdin 0, or "
                                      "--stdin none)");
    }
    /* mpirun --stdin none: its own standard input, unread. The very descriptor when possible
     * (a file's offset shared), else one of rank 0's own at the same place. */
    int flags = parent_fd_flags(parent, 0);
    if (flags < 0 || (flags & O_ACCMODE) == O_WRONLY) {
        return UTIL_OK; /* mpirun has none to read: /dev/null, an empty input */
    }
    int got = parent_fd_dup(parent, 0);
    if (got < 0) {
        char path[64];
        (void)snprintf(path, sizeof(path), "/proc/%ld/fd/0", parent);
        got = open(path, O_RDONLY | O_CLOEXEC);
        off_t pos = (off_t)parent_fd_pos(parent, 0);
        if (got >= 0 && pos > 0 && lseek(got, pos, SEEK_SET) < 0) {
            (void)close(got);
            got = -1;
        }
    }
    if (got < 0) {
        return util_fail(UTIL_EIO, "rank 0: read: cannot open mpirun's standard input: %s",
                         strerror(errno));
    }
    *fd = got;
    *own = 1;
    return UTIL_OK;
}

int sort_root_load(struct sort_job *job)
{
    uint64_t msg[2] = {UTIL_OK, 0};
    int is_stdin = strcmp(job->in_path, "-") == 0, in_fd = STDIN_FILENO, own = 0;
    int err = is_stdin ? root_stdin(job, &in_fd, &own) : UTIL_OK;
    if (err != UTIL_OK) {
        msg[0] = (uint64_t)(int64_t)err;
    } else if (job->rank == 0) {
        const char *path = job->in_path;
        int fd = is_stdin ? in_fd : open(path, O_RDONLY | O_CLOEXEC);
        uint64_t hint = 0;
        if (fd < 0) {
            err = util_fail(UTIL_EIO, "rank 0: read: cannot open input: %s (%s)",
                            strerror(errno), path);
        } else {
            if (!is_stdin) {
                hint = job->n_total * job->rsize; /* checked size; standard input: none */
            }
            int64_t got = read_all(job, fd, hint);
            if (got < 0) {
                err = util_fail(got == -ENOMEM ? UTIL_ENOMEM : UTIL_EIO,
                                "rank 0: read: %s (%s)", strerror((int)-got), path);
            } else if ((uint64_t)got % job->rsize != 0) {
                /* Only standard input gets here: a file's size was checked before. */
                err = util_error("input size %lld is not a multiple of %zu bytes (%s)",
                                 (long long)got, job->rsize, is_stdin ? "standard input" : path);
            } else if (!is_stdin && (uint64_t)got != hint) {
                err = util_fail(UTIL_EIO, "rank 0: read: the input changed size while it was "
                                          "read; nothing was written (%s)", path);
            } else if (!is_stdin) {
                struct util_file_id now;
                if (util_file_id_get(path, &now) != UTIL_OK ||
                    !util_file_id_same(&now, &job->in_id)) {
                    err = util_fail(UTIL_EIO, "rank 0: read: the input changed while it was "
                                              "read; nothing was written (%s)", path);
                }
            }
            msg[1] = got > 0 ? (uint64_t)got / job->rsize : 0;
            if (!is_stdin || own) {
                close(fd);
            }
        }
        msg[0] = (uint64_t)(int64_t)err;
    }
    MPI_Bcast(msg, 2, MPI_UINT64_T, 0, job->comm);
    job->n_total = msg[1];
    return (int)(int64_t)msg[0]; /* run_phase() agrees and prints rank 0's line */
}

/* All ranks learn whether every one of them got its buffers (ok); a rank that did not has
 * reported it. Returns 0 or UTIL_ENOMEM on every rank. */
static int agree_room(struct sort_job *job, int ok)
{
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    return ok ? UTIL_OK : UTIL_ENOMEM;
}

/* Makes job->stage hold at least n packed elements (its contents are lost; stage_cap counts
 * bytes). Returns 1, or 0 after reporting that it could not. */
static int stage_room(struct sort_job *job, uint64_t n, const char *phase)
{
    uint64_t bytes = n * job->rsize;
    if (job->stage != NULL && job->stage_cap >= bytes) {
        return 1;
    }
    util_free_big(job->stage);
    job->stage = util_alloc_big(bytes ? bytes : 1);
    job->stage_cap = job->stage ? bytes : 0;
    if (job->stage == NULL) {
        util_fail(UTIL_ENOMEM, "rank %d: %s: out of memory for %llu %s", job->rank, phase,
                  (unsigned long long)n, job->fmt ? "records" : "keys");
        return 0;
    }
    return 1;
}

/* The smallest power of two >= p. */
static int tree_span(int p)
{
    int s = 1;
    while (s < p) {
        s <<= 1;
    }
    return s;
}

/* Scatter by the binomial tree: rank r receives its subtree's bundle from its parent, keeps its
 * own slice, and forwards the rest, largest subtree first. */
static int scatter_tree(struct sort_job *job, const struct shape *sh)
{
    int r = job->rank, p = job->size;
    uint64_t n = job->n_total;
    int span = tree_span(p);
    /* My subtree is [r, r + lowbit(r)) (the root's is everything). */
    int sub = r == 0 ? span : (r & -r);
    int last = r + sub < p ? r + sub : p;
    uint64_t first_key = sort_slice_begin(n, p, r);
    uint64_t bundle = sort_slice_begin(n, p, last) - first_key;
    const char *have = (const char *)job->stage; /* the bundle, my own slice first, packed */
    int err = UTIL_OK;
    /* An inner node's room for its subtree's bundle, agreed before any key moves. */
    int inner = r != 0 && last > r + 1;
    if ((err = agree_room(job, !inner || stage_room(job, bundle, "read"))) != UTIL_OK) {
        return err;
    }
    if (r != 0) {
        if (last == r + 1) {
            /* A leaf receives straight into its key buffer. */
            return recv_elems(job->a, bundle, sh->type, sh->rsize, r - sub, job->comm);
        }
        if ((err = recv_elems(job->stage, bundle, sh->type, sh->rsize, r - sub, job->comm)) !=
            UTIL_OK) {
            return err;
        }
        have = (const char *)job->stage;
    }
    for (int mask = sub / 2; mask >= 1; mask /= 2) {
        int child = r + mask;
        if (child >= p) {
            continue;
        }
        int child_last = child + mask < p ? child + mask : p;
        uint64_t from = sort_slice_begin(n, p, child) - first_key;
        uint64_t count = sort_slice_begin(n, p, child_last) - sort_slice_begin(n, p, child);
        if ((err = send_elems(have + from * sh->rsize, count, sh->type, sh->rsize, child,
                              job->comm)) != UTIL_OK) {
            return err;
        }
    }
    util_copy(job->a, have, job->n_local * sh->rsize); /* my own slice, first in the bundle */
    return UTIL_OK;
}

/* MPI_Scatterv from rank 0: refused before any data moves when a count exceeds the int limit. */
static int scatter_flat(struct sort_job *job, const struct shape *sh)
{
    int p = job->size, err = UTIL_OK;
    int *counts = util_malloc(2 * (size_t)p * sizeof(int));
    if (counts == NULL) {
        util_fail(UTIL_ENOMEM, "rank %d: read: out of memory", job->rank);
    }
    if ((err = agree_room(job, counts != NULL)) != UTIL_OK) {
        util_free(counts);
        return err;
    }
    int *displs = counts + p;
    if (job->n_total > call_elems(job->rsize)) {
        err = job->rank == 0 ? util_fail(UTIL_EUSAGE, "--io rootv handles at most %llu %s; "
                                                      "use --io root (%llu)",
                                         (unsigned long long)call_elems(job->rsize),
                                         job->fmt ? "records" : "keys",
                                         (unsigned long long)job->n_total)
                             : UTIL_EUSAGE;
    } else {
        for (int r = 0; r < p; r++) {
            displs[r] = (int)sort_slice_begin(job->n_total, p, r);
            counts[r] = (int)(sort_slice_begin(job->n_total, p, r + 1) - (uint64_t)displs[r]);
        }
        if (MPI_Scatterv(job->stage, counts, displs, sh->type, job->a, (int)job->n_local, sh->type,
                         0, job->comm) != MPI_SUCCESS) {
            err = util_fail(UTIL_EMPI, "rank %d: read: MPI_Scatterv failed", job->rank);
        }
    }
    util_free(counts);
    return err;
}

int sort_root_scatter(struct sort_job *job)
{
    struct shape sh = shape_of(job);
    int err;
    if (job->cfg->io != SORTEX_IO_ROOT) {
        err = scatter_flat(job, &sh); /* keeps rank 0's stage: MPI_Gatherv needs it again */
    } else {
        err = scatter_tree(job, &sh);
        /* The tree gather needs at most half the output in flight: give the input copy back. */
        util_free_big(job->stage);
        job->stage = NULL;
        job->stage_cap = 0;
    }
    return err;
}

/* What rank 0 writes to, for error lines. */
static const char *out_name(const struct sort_job *job)
{
    return job->tmp_path != NULL ? job->tmp_path : "standard output";
}

/* Rank 0 writes its own sorted slice. */
static int write_own(struct sort_job *job, int fd, const struct shape *sh)
{
    int w = write_all(fd, job->out, job->n_out * sh->rsize);
    return w == 0 ? UTIL_OK
                  : util_fail(UTIL_EIO, "rank 0: write: %s (%s)", strerror(-w), out_name(job));
}

/* Gather by the binomial tree, rank 0 writing each bundle as it arrives. */
static int gather_tree(struct sort_job *job, int fd, const uint64_t *begin, const struct shape *sh)
{
    int r = job->rank, p = job->size, err = UTIL_OK;
    int span = tree_span(p);
    int sub = r == 0 ? span : (r & -r);
    int last = r + sub < p ? r + sub : p;
    uint64_t bundle = begin[last] - begin[r];
    char *buf = (char *)job->out;
    /* Room first, agreed before any key moves: rank 0 for the largest bundle it receives (the
     * one from rank span/2), an inner node for its subtree behind its own slice. */
    uint64_t room = 0;
    if (r == 0) {
        for (int mask = 1; mask < span; mask <<= 1) {
            if (mask < p) {
                int l = 2 * mask < p ? 2 * mask : p;
                room = begin[l] - begin[mask] > room ? begin[l] - begin[mask] : room;
            }
        }
    } else if (last > r + 1) {
        room = bundle;
    }
    if ((err = agree_room(job, room == 0 || stage_room(job, room, "write"))) != UTIL_OK) {
        return err;
    }
    if (r == 0) {
        err = write_own(job, fd, sh);
        buf = (char *)job->stage;
    } else if (last > r + 1) {
        /* An inner node sends its own slice and its children's behind it, as one bundle. */
        util_copy(job->stage, job->out, job->n_out * sh->rsize);
        buf = (char *)job->stage;
    }
    for (int mask = 1; mask < sub; mask <<= 1) {
        int child = r + mask;
        if (child >= p) {
            break;
        }
        int child_last = child + mask < p ? child + mask : p;
        uint64_t count = begin[child_last] - begin[child];
        char *dst = r == 0 ? buf : buf + (begin[child] - begin[r]) * sh->rsize;
        int rc = recv_elems(dst, count, sh->type, sh->rsize, child, job->comm);
        if (rc != UTIL_OK) {
            return util_fail(rc, "rank %d: write: receive from rank %d failed", r, child);
        }
        if (r == 0 && err == UTIL_OK) {
            int w = write_all(fd, dst, count * sh->rsize);
            if (w != 0) {
                err = util_fail(UTIL_EIO, "rank 0: write: %s (%s)", strerror(-w), out_name(job));
            }
        }
    }
    if (r != 0) {
        return send_elems(buf, bundle, sh->type, sh->rsize, r - sub, job->comm);
    }
    return err;
}

/* MPI_Gatherv to rank 0, which then writes everything. */
static int gather_flat(struct sort_job *job, int fd, const uint64_t *begin, const struct shape *sh)
{
    int p = job->size, err = UTIL_OK;
    int *counts = util_malloc(2 * (size_t)p * sizeof(int));
    if (counts == NULL) {
        util_fail(UTIL_ENOMEM, "rank %d: write: out of memory", job->rank);
    }
    if ((err = agree_room(job, counts != NULL)) != UTIL_OK) {
        util_free(counts);
        return err;
    }
    int *displs = counts + p;
    for (int r = 0; r < p; r++) {
        displs[r] = (int)begin[r];
        counts[r] = (int)(begin[r + 1] - begin[r]);
    }
    if (MPI_Gatherv(job->out, (int)job->n_out, sh->type, job->stage, counts, displs, sh->type, 0,
                    job->comm) != MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: write: MPI_Gatherv failed", job->rank);
    } else if (job->rank == 0) {
        int w = write_all(fd, job->stage, job->n_total * sh->rsize);
        if (w != 0) {
            err = util_fail(UTIL_EIO, "rank 0: write: %s (%s)", strerror(-w), out_name(job));
        }
    }
    util_free(counts);
    return err;
}

int sort_root_gather(struct sort_job *job, int fd)
{
    int p = job->size;
    uint64_t *begin = util_malloc(((size_t)p + 1) * sizeof(uint64_t));
    if (begin == NULL) {
        util_fail(UTIL_ENOMEM, "rank %d: write: out of memory", job->rank);
    }
    struct shape sh = shape_of(job);
    int err = agree_room(job, begin != NULL);
    if (err != UTIL_OK) {
        util_free(begin);
        return err;
    }
    /* Where each rank's sorted slice starts in the output. */
    MPI_Allgather(&job->n_out, 1, MPI_UINT64_T, begin + 1, 1, MPI_UINT64_T, job->comm);
    begin[0] = 0;
    for (int r = 0; r < p; r++) {
        begin[r + 1] += begin[r];
    }
    err = job->cfg->io == SORTEX_IO_ROOT ? gather_tree(job, fd, begin, &sh)
                                         : gather_flat(job, fd, begin, &sh);
    util_free(begin);
    return err;
}
