/*
 * sort/exchange.c: phase 6, bucket j goes to rank j through the chosen exchange back-end.
 *
 * One rank has one bucket, already sorted where the result belongs: no back-end runs and
 * nothing is copied (finish then has nothing to do either). Every back-end still handles P = 1
 * itself; the exchange benchmark's tests run them all at one rank. After the exchange the
 * back-ends' kept scratch (exchange_release_scratch()) is freed: the sort exchanges once.
 *
 * The back-end reports into the exchange module's struct exchange_stats, and the sort copies
 * that into its public struct sortex_exchange_stats: the contract between sort/ and exchange/
 * may change without changing the library's interface.
 */
#include <string.h>

#include "sort/internal.h"
#include "util/util.h"

/* The public copy of what the back-end reported. */
static void report(struct sortex_exchange_stats *out, const struct exchange_stats *in)
{
    memset(out, 0, sizeof(*out));
    out->bytes_sent = in->bytes_sent;
    out->bytes_recv = in->bytes_recv;
    out->messages = in->messages;
    out->rounds = in->rounds;
    out->max_message = in->max_message;
    out->seconds = in->seconds;
    for (int i = 0; i < in->nextra && i < SORTEX_EXCHANGE_MAX_EXTRA; i++) {
        out->extra[i].name = in->extra[i].name;
        out->extra[i].value = in->extra[i].value;
        out->nextra = i + 1;
    }
}

int sort_exchange(struct sort_job *job)
{
    struct exchange_stats st;
    memset(&st, 0, sizeof(st));
    if (job->size == 1) {
        report(&job->stats->exchange, &st);
        return 0;
    }
    /* Elements are whole records at their memory stride: the back-ends move them as they are,
     * counts and capacity in records. */
    struct exchange_args args = {
        .comm = job->comm,
        .threads = job->threads,
        .elem_size = job->words * sizeof(uint64_t),
        .send = job->a,
        .send_counts = job->send_counts,
        .recv = job->b,
        .recv_cap = job->cap_b,
        .recv_counts = job->recv_counts, /* the bucket phase's all-to-all filled them */
        .stats = &st,
        .recv_counts_known = 1,
    };
    int err = job->exchange->run(&args);
    report(&job->stats->exchange, &st);
    /* The sort exchanges once: the back-end's kept scratch would only hold memory from here on. */
    exchange_release_scratch();
    return err;
}
