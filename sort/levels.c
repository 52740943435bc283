/*
 * sort/levels.c: the sample sort in L levels (--levels), and what the phases ask of the level
 * that runs (its buckets, targets and tolerance).
 *
 * Scheme (AMS-sort: Axtmann, Bingmann, Sanders and Schulz, "Practical Massively Parallel
 * Sorting", SPAA 2015, sections 4.1-4.3; HykSort, Sundar, Malhotra and Biros, ICS 2013, splits
 * the same way). With one level every rank searches P - 1 splitters and sends P - 1 messages.
 * With L, a level splits its group of ranks (at first all P) into k = gs^(1/left) groups of
 * consecutive ranks (sort_level_groups()), and:
 *   1. the histogram selection (sort/select.c) picks the k - 1 splitters between the groups,
 *      on the group's communicator, each aiming at the final target of the rank where its
 *      group begins (sort_level_target()), with the one-level sort's tolerance: a boundary
 *      between two ranks is placed once, at the first level that separates them, so every
 *      rank ends within the bound of one level, (1 + eps) n/P + 1, whatever L. No epsilon is
 *      split across the levels, and no overpartitioning is needed: the selection counts every
 *      candidate's rank exactly;
 *   2. every rank cuts its sorted elements into k pieces (where the selection's last counts
 *      put each splitter: no search); an
 *      all-reduce gives each group's total and an exclusive scan each sender's place in the
 *      sequence "sender 0's piece, sender 1's piece, ..." of each group, whose ranks take
 *      consecutive ranges of it (the prefix-sum assignment, sort_level_deal()): a rank with
 *      about n/P elements sends about 2 messages a group, 2k in all, and receives about as
 *      many. Each sender tells each of its receivers how much it deals them (one message, a
 *      count); a receiver knows its total from the sums and takes counts from any sender
 *      until it has them all, so no O(P) all-to-all of counts is needed;
 *   3. the exchange back-end (any, or --exchange auto priced on this level's matrix) moves
 *      the pieces on the group's communicator; 4. each rank merges what it received (runs in
 *      sender order, ties to the lower sender: sort/finish.c);
 *   5. the next level runs inside each group, on a communicator made from its range of ranks
 *      (MPI_Comm_create_group: collective over the new group only, no O(P) step) with the
 *      group's elements, positions counted from the group's start: since every receiver holds
 *      a consecutive range of its group's sequence, merged stably, a rank's offset in the
 *      group plus the index is a valid (key, input position) tie-break, and the sort stays
 *      stable across levels.
 * The last level has one rank a group (k = its group's size): the one-level sort on the group.
 * With --balance exact (and auto, which takes it with more than one level), every level selects
 * within eps all the same, and a final shift moves the at most eps n/(2P) elements each
 * boundary is off by to the next ranks (level_shift()): every rank then holds exactly floor or
 * ceil of n/P, for about four more messages and a copy, where exact windows at every level
 * would take about log_4(n/(8P)) more selection rounds each.
 * Cost per rank: L (k log(n/P)) searches instead of P log(n/P), about 3 L k start-ups (data and
 * counts) plus O(L log P) in collectives instead of P, and every element moved and merged L
 * times.
 */
#include <math.h>
#include <string.h>

#include "exchange/machine.h"
#include "sort/internal.h"
#include "util/alloc.h"
#include "util/knobs.h"
#include "util/util.h"

void sort_levels_choose_job(struct sort_job *job)
{
    struct sortex_stats *st = job->stats;
    int asked = job->cfg->levels, l = asked;
    memset(st->levels_price, 0, sizeof(st->levels_price));
    if (asked == 0) {
        /* auto: the regular sample is a one-level selection; else the model's choice, on the
         * machine --exchange auto prices with: rank 0's machine file, SORTEX_MODEL_ALPHA and
         * SORTEX_MODEL_BETA over it, broadcast so that every rank runs the same L. Up to
         * SORT_LEVELS_ONE_P ranks one level runs unpriced, and nothing is read. */
        struct sort_level_machine m;
        sort_level_machine_default(&m);
        if (job->balance != SORTEX_BALANCE_SAMPLE && job->size > SORT_LEVELS_ONE_P) {
            double ab[2] = {m.alpha, m.beta};
            if (job->rank == 0) {
                struct exchange_machine ex;
                (void)exchange_machine_load_quiet(&ex, NULL); /* the built-in one if unusable */
                ab[0] = util_knob(UTIL_KNOB_MODEL_ALPHA)->valid
                            ? 1e-9 * (double)util_knob_u64(UTIL_KNOB_MODEL_ALPHA)
                            : ex.alpha;
                ab[1] = util_knob(UTIL_KNOB_MODEL_BETA)->valid
                            ? 1e-12 * (double)util_knob_u64(UTIL_KNOB_MODEL_BETA)
                            : ex.beta;
            }
            MPI_Bcast(ab, 2, MPI_DOUBLE, 0, job->comm);
            m.alpha = ab[0];
            m.beta = ab[1];
        }
        l = job->balance == SORTEX_BALANCE_SAMPLE
                ? 1
                : sort_levels_choose(job->size, job->n_total, job->rsize, job->epsilon, &m,
                                     st->levels_price);
    }
    job->levels = l;
    st->levels = l;
    st->levels_auto = asked == 0;
    if (l > 1 && job->cfg->balance == SORTEX_BALANCE_AUTO) {
        /* More than one level ends with the shift to exact shares (sort_levels_run()). */
        job->balance = SORTEX_BALANCE_EXACT;
        st->balance = job->balance;
        sort_choose_oversample(job); /* the bound the stats state */
    }
}

/*
 * The counts of a level that is not the last (step 2 above): every rank sends each receiver the
 * count it deals it (send_counts, by rank of the group), and learns what it receives from whom
 * (recv_counts) by taking counts from any sender until they add up to @expect, the length of
 * its range. Messages: one a receiver dealt to, none to itself. Collective over the group.
 */
static int level_counts(struct sort_job *job, uint64_t expect, uint64_t *msgs)
{
    int gs = job->size, me = job->rank, nsend = 0;
    for (int d = 0; d < gs; d++) {
        nsend += d != me && job->send_counts[d] > 0;
    }
    MPI_Request *req = util_malloc((size_t)(nsend ? nsend : 1) * sizeof(*req));
    /* A rank without room for its requests cannot take part: all agree first. */
    int mine = req != NULL, ok = mine;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        util_free(req);
        return !mine ? util_fail(UTIL_ENOMEM, "rank %d: bucket: out of memory", job->rank)
                     : UTIL_ENOMEM;
    }
    int i = 0, rc = MPI_SUCCESS;
    for (int d = 0; d < gs && rc == MPI_SUCCESS; d++) {
        if (d != me && job->send_counts[d] > 0) {
            rc = MPI_Isend(&job->send_counts[d], 1, MPI_UINT64_T, d, SORT_TAG_LEVEL_COUNTS,
                           job->comm, &req[i++]);
        }
    }
    memset(job->recv_counts, 0, (size_t)gs * sizeof(uint64_t));
    job->recv_counts[me] = job->send_counts[me];
    uint64_t got = job->recv_counts[me];
    while (rc == MPI_SUCCESS && got < expect) {
        uint64_t v = 0;
        MPI_Status status;
        rc = MPI_Recv(&v, 1, MPI_UINT64_T, MPI_ANY_SOURCE, SORT_TAG_LEVEL_COUNTS, job->comm,
                      &status);
        if (rc == MPI_SUCCESS) {
            job->recv_counts[status.MPI_SOURCE] = v;
            got += v;
        }
    }
    if (rc == MPI_SUCCESS) {
        rc = MPI_Waitall(i, req, MPI_STATUSES_IGNORE);
    }
    util_free(req);
    *msgs = (uint64_t)nsend;
    if (rc != MPI_SUCCESS || got != expect) {
        return util_fail(UTIL_EMPI, "rank %d: the counts of a level failed", job->rank);
    }
    return UTIL_OK;
}

/*
 * Phase 5 of a level that is not the last: the rank's k pieces (the selection's cuts), the
 * groups' totals (all-reduce) and this rank's place in each group's sequence (exclusive scan),
 * the prefix-sum assignment of every piece to its group's ranks, and the counts.
 */
static int level_bucket(struct sort_job *job)
{
    struct sort_level *lv = job->level;
    int k = lv->k, gs = job->size;
    uint64_t *piece = util_malloc(2 * (size_t)k * sizeof(uint64_t));
    int mine = piece != NULL, ok = mine;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, job->comm);
    if (!ok) {
        util_free(piece);
        return !mine ? util_fail(UTIL_ENOMEM, "rank %d: bucket: out of memory", job->rank)
                     : UTIL_ENOMEM;
    }
    uint64_t *x = piece + k, prev = 0;
    for (int j = 0; j < k; j++) {
        /* The boundaries the selection counted (select.c): no search. */
        uint64_t next = j + 1 < k ? job->cut[j] : job->n_local;
        next = next < prev ? prev : next;
        piece[j] = next - prev;
        prev = next;
    }
    int err = UTIL_OK;
    if (MPI_Allreduce(piece, lv->total, k, MPI_UINT64_T, MPI_SUM, job->comm) != MPI_SUCCESS ||
        MPI_Exscan(piece, x, k, MPI_UINT64_T, MPI_SUM, job->comm) != MPI_SUCCESS) {
        err = util_fail(UTIL_EMPI, "rank %d: bucket: the sums of level %d failed", job->rank,
                        lv->index + 1);
    }
    if (err == UTIL_OK) {
        if (job->rank == 0) {
            memset(x, 0, (size_t)k * sizeof(uint64_t)); /* MPI_Exscan leaves rank 0's undefined */
        }
        for (int j = 0; j < k; j++) {
            int f = sort_level_first(j, gs, k), s = sort_level_first(j + 1, gs, k) - f;
            (void)sort_level_deal(x[j], piece[j], lv->total[j], s, job->send_counts + f);
        }
        /* This rank's range of its group's sequence: what it receives. */
        int j = sort_level_group_of(job->rank, gs, k), f = sort_level_first(j, gs, k);
        int s = sort_level_first(j + 1, gs, k) - f, i = job->rank - f;
        job->n_recv =
            sort_level_begin(lv->total[j], s, i + 1) - sort_level_begin(lv->total[j], s, i);
        err = level_counts(job, job->n_recv, &lv->count_msgs);
    }
    util_free(piece);
    if (err != UTIL_OK) {
        return err;
    }
    return sort_reserve(job, &job->b, &job->cap_b, job->n_recv);
}

/*
 * After a level that is not the last: this rank's sorted elements (job->out) become its input
 * of the next level, in its group of the level: the group's communicator (MPI_Comm_create_group
 * over the group's range of ranks, collective over the group only), its rank and size, its
 * elements and this rank's first position among them, and where the group sits in the sort.
 * Frees the level's communicator unless it is @world.
 */
static int descend(struct sort_job *job, struct sort_level *lv, MPI_Comm world)
{
    int gs = job->size, k = lv->k;
    int j = sort_level_group_of(job->rank, gs, k), f = sort_level_first(j, gs, k);
    int s = sort_level_first(j + 1, gs, k) - f;
    uint64_t before = 0;
    for (int g = 0; g < j; g++) {
        before += lv->total[g];
    }
    if (job->out != job->a) {
        sort_swap_buffers(job);
    }
    job->n_local = job->n_out;
    MPI_Group parent, sub;
    MPI_Comm next = MPI_COMM_NULL;
    int range[1][3] = {{f, f + s - 1, 1}};
    int rc = MPI_Comm_group(job->comm, &parent);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Group_range_incl(parent, 1, range, &sub);
        MPI_Group_free(&parent);
    }
    if (rc == MPI_SUCCESS) {
        rc = MPI_Comm_create_group(job->comm, sub, SORT_TAG_LEVEL_GROUP, &next);
        MPI_Group_free(&sub);
    }
    if (rc != MPI_SUCCESS || next == MPI_COMM_NULL) {
        return util_fail(UTIL_EMPI, "rank %d: level %d: MPI_Comm_create_group failed", job->rank,
                         lv->index + 1);
    }
    if (job->comm != world) {
        MPI_Comm_free(&job->comm);
    }
    job->comm = next;
    MPI_Comm_rank(next, &job->rank);
    MPI_Comm_size(next, &job->size);
    job->n_total = lv->total[j];
    job->offset = sort_level_begin(job->n_total, s, job->rank);
    lv->first_rank += f;
    lv->group_offset += before;
    return UTIL_OK;
}

/*
 * The shift to exact shares, after the last level with --balance exact (or auto): the ranks'
 * slices are the global order cut within the selection's tolerance of the exact targets, so
 * each rank deals its slice over the targets floor(r n/P) (sort_level_deal() with the whole sort
 * as one group of one-rank groups: at most the tolerance moves, to the next ranks), the counts
 * as a level's, and the pieces by the back-end of non-empty pieces. The pieces of a rank arrive
 * in source order, which is the global order: they need no merge. Collective over job->comm,
 * the whole sort's.
 */
static int level_shift(struct sort_job *job)
{
    uint64_t g = 0, msgs = 0;
    MPI_Exscan(&job->n_out, &g, 1, MPI_UINT64_T, MPI_SUM, job->comm);
    g = job->rank == 0 ? 0 : g;
    (void)sort_level_deal(g, job->n_out, job->n_total, job->size, job->send_counts);
    uint64_t want = sort_level_begin(job->n_total, job->size, job->rank + 1) -
                    sort_level_begin(job->n_total, job->size, job->rank);
    int err = level_counts(job, want, &msgs);
    uint64_t **to = job->out == job->a ? &job->b : &job->a;
    uint64_t *cap = to == &job->a ? &job->cap_a : &job->cap_b;
    if (err == UTIL_OK) {
        err = sort_agree(job, sort_reserve(job, to, cap, want ? want : 1));
    }
    if (err != UTIL_OK) {
        return err;
    }
    struct exchange_stats st;
    memset(&st, 0, sizeof(st));
    struct exchange_args args = {
        .comm = job->comm,
        .threads = job->threads,
        .elem_size = job->rsize,
        .send = job->out,
        .send_counts = job->send_counts,
        .recv = *to,
        .recv_cap = *cap,
        .recv_counts = job->recv_counts,
        .stats = &st,
        .recv_counts_known = 1,
    };
    err = exchange_find("sparse")->run(&args);
    exchange_release_scratch();
    job->out = *to;
    job->n_out = want;
    /* The shift's messages and bytes count with the exchange's and the last level's. */
    struct sortex_stats *ss = job->stats;
    ss->shifted = st.bytes_sent / job->rsize;
    ss->exchange.bytes_sent += st.bytes_sent;
    ss->exchange.bytes_recv += st.bytes_recv;
    ss->exchange.messages += st.messages;
    struct sortex_level_stats *ls = &ss->level[job->levels - 1];
    ls->messages += st.messages + msgs;
    ls->bytes_sent += st.bytes_sent;
    return err;
}

/* The phases of one level on the job's group; the bucket phase of a level that is not the last
 * is level_bucket(). Returns the agreed outcome (over the group). */
static int run_level(struct sort_job *job, struct sort_level *lv)
{
    int err;
    struct sortex_stats *st = job->stats;
    struct sortex_level_stats *ls = &st->level[lv->index];
    uint64_t msgs = st->exchange.messages, bytes = st->exchange.bytes_sent;
    double t0 = util_now();
    lv->count_msgs = 0;
    if ((err = sort_run_phase(job, SORTEX_PHASE_SAMPLE, sort_select_sample)) == UTIL_OK &&
        (err = sort_run_phase(job, SORTEX_PHASE_SPLITTERS, sort_select_splitters)) == UTIL_OK &&
        (err = sort_run_phase(job, SORTEX_PHASE_BUCKET, lv->last ? sort_bucket : level_bucket)) ==
            UTIL_OK &&
        (err = sort_run_phase(job, SORTEX_PHASE_EXCHANGE, sort_exchange)) == UTIL_OK) {
        err = sort_run_phase(job, SORTEX_PHASE_FINISH, sort_finish);
    }
    ls->exchange = job->exchange->name;
    ls->messages = st->exchange.messages - msgs + lv->count_msgs;
    ls->bytes_sent = st->exchange.bytes_sent - bytes;
    ls->seconds = util_now() - t0;
    return err;
}

int sort_levels_run(struct sort_job *job)
{
    MPI_Comm world = job->comm;
    int rank = job->rank, size = job->size;
    uint64_t n_total = job->n_total, offset = job->offset;
    struct sort_level lv = {.n_world = job->n_total, .p_world = job->size};
    lv.total = util_malloc((size_t)job->size * sizeof(uint64_t));
    int err =
        sort_agree(job, lv.total != NULL
                            ? UTIL_OK
                            : util_fail(UTIL_ENOMEM, "rank %d: levels: out of memory", job->rank));
    int done = 0; /* the last level ran: job->out holds the rank's slice */
    for (int l = 0; err == UTIL_OK && l < job->levels && job->size > 1; l++) {
        int k = sort_level_groups(job->size, job->levels - l);
        job->stats->level[l].groups = k;
        job->stats->level[l].ranks = job->size;
        if (k < 2) {
            continue; /* one group: this level has nothing to split */
        }
        lv.index = l;
        lv.k = k;
        lv.last = k == job->size;
        job->level = &lv;
        err = run_level(job, &lv);
        if (err != UTIL_OK || lv.last) {
            done = lv.last;
            break;
        }
        double t0 = util_now(); /* the next communicator, timed with the finish */
        err = descend(job, &lv, world);
        job->stats->phase_seconds[SORTEX_PHASE_FINISH] += util_now() - t0;
    }
    if (err == UTIL_OK && !done) {
        /* A group of one rank: its sorted elements are its slice. */
        if (job->out != NULL && job->out != job->a) {
            sort_swap_buffers(job);
        }
        job->out = job->a;
        job->n_out = job->n_local;
    }
    /* Back to the whole sort; every rank agrees on the outcome of every group. */
    if (job->comm != world) {
        MPI_Comm_free(&job->comm);
    }
    job->comm = world;
    job->rank = rank;
    job->size = size;
    job->n_total = n_total;
    job->offset = offset;
    job->level = NULL;
    util_free(lv.total);
    err = sort_agree(job, err);
    if (err == UTIL_OK && job->balance == SORTEX_BALANCE_EXACT) {
        err = sort_run_phase(job, SORTEX_PHASE_FINISH, level_shift);
    }
    return err;
}
