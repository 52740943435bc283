/*
 * sort/exchange.c: phase 6, bucket j goes to rank j through the chosen exchange back-end.
 *
 * One rank has one bucket, already sorted where the result belongs: no back-end runs and
 * nothing is copied (finish then has nothing to do either). Every back-end still handles P = 1
 * itself; the exchange benchmark's tests run them all at one rank. After the exchange the
 * back-ends' kept scratch (exchange_release_scratch()) is freed: the sort exchanges once.
 */
#include <string.h>

#include "sort/internal.h"

int sort_exchange(struct sort_job *job)
{
    if (job->size == 1) {
        memset(&job->stats->exchange, 0, sizeof(job->stats->exchange));
        return 0;
    }
    struct exchange_args args = {
        .comm = job->comm,
        .threads = job->threads,
        .send = job->a,
        .send_counts = job->send_counts,
        .recv = job->b,
        .recv_cap = job->cap_b,
        .recv_counts = job->recv_counts, /* the bucket phase's all-to-all filled them */
        .stats = &job->stats->exchange,
        .recv_counts_known = 1,
    };
    int err = job->exchange->run(&args);
    /* The sort exchanges once: the back-end's kept scratch would only hold memory from here on. */
    exchange_release_scratch();
    return err;
}
