/*
 * sim/matrix.c: count matrices as CSV files: the reader behind file:PATH and sortex-sched
 * --matrix, and the printer of --print-matrix (see sim.h). One row per line, so a file round-trips.
 */
#include "sim/sim.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "util/alloc.h"
#include "util/util.h"

/* Parses one CSV field: optional blanks, decimal digits, optional blanks. */
static int parse_field(const char *s, const char *e, uint64_t *out)
{
    while (s < e && (*s == ' ' || *s == '\t')) {
        s++;
    }
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) {
        e--;
    }
    if (s == e) {
        return UTIL_EUSAGE;
    }
    uint64_t v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) {
            return UTIL_EUSAGE;
        }
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return UTIL_OK;
}

/* Shortens a field for an error message. */
static const char *excerpt(const char *s, const char *e, char *buf, size_t cap)
{
    size_t len = (size_t)(e - s) < cap - 1 ? (size_t)(e - s) : cap - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

int sim_matrix_read(const char *path, uint64_t **m, int *p)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return util_error("cannot read the matrix (%s: %s)", path, strerror(errno));
    }
    char *line = NULL, buf[48];
    size_t cap = 0, lineno = 0;
    uint64_t *a = NULL;
    long cols = -1, rows = 0;
    int err = UTIL_OK;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        char *s = line, *end = line + len;
        while (end > s && (end[-1] == '\n' || end[-1] == '\r')) {
            end--;
        }
        const char *t = s;
        while (t < end && (*t == ' ' || *t == '\t')) {
            t++;
        }
        if (t == end || *t == '#') {
            continue; /* blank or comment */
        }
        /* Count the fields of this row; the first row fixes P. */
        long fields = 1;
        for (const char *q = s; q < end; q++) {
            fields += *q == ',';
        }
        if (cols < 0) {
            if (fields > EXCHANGE_MODEL_MAX_P) {
                err = util_error("%s:%zu: %ld counts in a row, at most %d ranks (P too large)",
                                 path, lineno, fields, EXCHANGE_MODEL_MAX_P);
                break;
            }
            cols = fields;
            a = util_malloc((size_t)cols * (size_t)cols * sizeof(*a));
            if (a == NULL) {
                err = util_fail(UTIL_ENOMEM, "out of memory for a %ld x %ld matrix", cols, cols);
                break;
            }
        } else if (fields != cols) {
            err = util_error("%s:%zu: ragged matrix: %ld counts, the first row has %ld (%s)", path,
                             lineno, fields, cols, excerpt(s, end, buf, sizeof(buf)));
            break;
        }
        if (rows == cols) {
            err = util_error("%s:%zu: more rows than the %ld columns (not a square matrix)", path,
                             lineno, cols);
            break;
        }
        /* Parse the fields into row `rows`. */
        const char *q = s;
        for (long j = 0; j < cols && err == UTIL_OK; j++) {
            const char *comma = memchr(q, ',', (size_t)(end - q));
            const char *fe = comma != NULL ? comma : end;
            if (parse_field(q, fe, &a[(size_t)rows * (size_t)cols + (size_t)j]) != UTIL_OK) {
                err = util_error("%s:%zu: count %ld is not a non-negative integer (%s)", path,
                                 lineno, j + 1, excerpt(q, fe, buf, sizeof(buf)));
            }
            q = fe + 1;
        }
        if (err != UTIL_OK) {
            break;
        }
        rows++;
    }
    if (err == UTIL_OK && ferror(f)) {
        err = util_error("cannot read the matrix (%s: %s)", path, strerror(errno));
    }
    if (err == UTIL_OK && cols < 0) {
        err = util_error("the matrix has no rows (%s)", path);
    }
    if (err == UTIL_OK && rows != cols) {
        err = util_error("%s: %ld rows of %ld counts: not a square matrix (ragged CSV)", path, rows,
                         cols);
    }
    free(line);
    fclose(f);
    if (err != UTIL_OK) {
        util_free(a);
        return err;
    }
    *m = a;
    *p = (int)cols;
    return UTIL_OK;
}

void sim_matrix_print(FILE *f, const char *label, const uint64_t *m, int p, const char *unit)
{
    fprintf(f, "# %s, %s from row to column, P = %d\n", label, unit, p);
    for (size_t i = 0; i < (size_t)p; i++) {
        for (size_t j = 0; j < (size_t)p; j++) {
            fprintf(f, "%s%llu", j ? "," : "", (unsigned long long)m[i * (size_t)p + j]);
        }
        fputc('\n', f);
    }
}
