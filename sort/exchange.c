/* sort/exchange.c: phase 6, bucket j goes to rank j through the chosen exchange back-end. */
#include "sort/internal.h"

int sort_exchange(struct sort_job *job)
{
    struct exchange_args args = {
        .comm = job->comm,
        .threads = job->threads,
        .send = job->a,
        .send_counts = job->send_counts,
        .recv = job->b,
        .recv_cap = job->cap_b,
        .recv_counts = job->recv_counts,
        .stats = &job->stats->exchange,
    };
    return job->exchange->run(&args);
}
