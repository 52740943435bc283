/*
 * util/temp.h: outputs that appear whole or not at all.
 *
 * Every program writes a new file under a temporary name in the final file's directory and
 * renames it into place only when it is complete, so a reader never sees a partial file under
 * the final name. This header holds the one rule for those names (always valid where the final
 * name is valid, however long), their creation, and their removal when the process is
 * interrupted by a signal.
 */
#ifndef SORTEX_UTIL_TEMP_H
#define SORTEX_UTIL_TEMP_H

#include <stdint.h>
#include <stdio.h>

/** Longest tag a caller may pass to util_temp_name(): "PID-RANDOM" or "PID.ATTEMPT". */
#define UTIL_TEMP_TAG_MAX 40

/**
 * Builds the temporary name used while @final is being written: ".NAME.sortex-tmp.TAG" in the
 * same directory (so the closing rename is atomic). When that would exceed the directory's
 * longest file name (pathconf _PC_NAME_MAX) or PATH_MAX, NAME is shortened (down to nothing:
 * ".sortex-tmp.TAG"), so every final name that util_temp_fits() accepts gets a valid temporary
 * name. @tag has at most UTIL_TEMP_TAG_MAX characters. Returns a malloc'd string (util_free),
 * or NULL when out of memory or when no name fits (util_temp_fits() says why beforehand).
 */
char *util_temp_name(const char *final, const char *tag);

/**
 * Whether @final can be written through a temporary name: its last component fits the
 * directory's longest file name and the whole path, and a temporary name beside it, fit
 * PATH_MAX. Prints nothing; returns 0 or UTIL_EUSAGE and, in *@limit, the limit broken (the
 * longest name, or PATH_MAX).
 */
int util_temp_fits(const char *final, long *limit);

/**
 * Creates a new temporary file beside @final (util_temp_name() with tag "PID.ATTEMPT"), never
 * opening an existing file or following a link: O_CREAT | O_EXCL, another attempt on EEXIST.
 * The file is tracked (util_temp_track()) until util_temp_done(). Returns the write
 * descriptor and stores the malloc'd name in *@name (util_free), or -1 with errno set.
 */
int util_temp_create(const char *final, char **name);

/** util_temp_create() as a stdio stream, or NULL with errno set (and nothing left behind). */
FILE *util_temp_fopen(const char *final, char **name);

/**
 * Reserves @bytes for the file open on @fd, so that a full file system is found before any data
 * is written: fallocate(), or where the file system has none (NFSv3, ext2), a check that the
 * free space holds @bytes. Returns 0 or an errno value (ENOSPC when the space is missing).
 */
int util_temp_reserve(int fd, uint64_t bytes);

/**
 * Whether the file system of @fd has room for @bytes more (root may count the blocks reserved
 * for it). Returns 0 when it has or cannot tell, else ENOSPC, with the free bytes in *@avail.
 */
int util_temp_space(int fd, uint64_t bytes, uint64_t *avail);

/**
 * Tracks @path, a temporary file this process created (or is about to create), so that
 * util_temp_signals()'s handler removes it when a signal ends the process. Tracking holds a
 * descriptor of the file's directory, taken now: the removal (by the handler,
 * util_temp_remove() or util_temp_commit()) reaches the file in that directory even when the
 * directory was renamed meanwhile. At most a few files are tracked at once; the string must
 * stay valid until the file is untracked.
 */
void util_temp_track(const char *path);

/** Stops tracking @path (the caller renamed or removed it itself); NULL is fine. */
void util_temp_done(const char *path);

/** util_temp_commit()'s code for a directory that is no longer at its path. */
#define UTIL_TEMP_EMOVED 0x10000

/**
 * Renames the tracked temporary file @path to @final, its name in the same directory, and stops
 * tracking it. The directory at @final's path must still be the one @path was created in (the
 * descriptor util_temp_track() took): one moved or replaced while the file was written gets no
 * output under a name the user did not ask for. On any failure the temporary file is removed
 * (through that descriptor, so nothing is left behind in a moved directory). Returns 0, an
 * errno value, or UTIL_TEMP_EMOVED; util_temp_strerror() words it.
 */
int util_temp_commit(const char *path, const char *final);

/**
 * Removes the tracked temporary file @path (through its directory's descriptor) and stops
 * tracking it. Returns 0 (also when it was gone already) or an errno value.
 */
int util_temp_remove(const char *path);

/**
 * Closes @f, a stream from util_temp_fopen() of @path, and renames it to @final
 * (util_temp_commit()) when every write and the close succeeded; else removes it. Returns 0 or
 * a code for util_temp_strerror().
 */
int util_temp_fclose(FILE *f, const char *path, const char *final);

/** The words for a code of util_temp_commit() or util_temp_remove(). */
const char *util_temp_strerror(int code);

/**
 * For the programs' main(): SIGINT, SIGTERM, SIGHUP and SIGQUIT remove every tracked temporary
 * file and then end the process as the signal would have; SIGPIPE and SIGXFSZ are ignored, so
 * that writing to a closed pipe or past a file size limit is an error the program reports
 * (EPIPE, EFBIG) rather than a silent death. Libraries never call it.
 */
void util_temp_signals(void);

#endif
