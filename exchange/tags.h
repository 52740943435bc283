/*
 * exchange/tags.h: every MPI tag the exchange back-ends use, in one place (Open MPI's
 * coll_tags.h idea), and the first tag they leave to the modules above them, which number
 * their own from there (sort/internal.h). The sort works on a duplicated communicator, so none
 * of them meets the caller's messages.
 */
#ifndef SORTEX_EXCHANGE_TAGS_H
#define SORTEX_EXCHANGE_TAGS_H

enum exchange_tag {
    EXCHANGE_TAG_ALLTOALLV_BIG = 101, /* alltoallv: chunked point-to-point beyond INT_MAX */
    EXCHANGE_TAG_TRANSPOSE = 201,     /* transpose: chunked rounds */
    EXCHANGE_TAG_SCHEDULE = 301,      /* direct, forward, fullduplex: scheduled steps */
    EXCHANGE_TAG_SCHEDULE_FWD = 302,  /* forward: second hops of forwarded pieces */
    EXCHANGE_TAG_PAIRWISE = 401,      /* pairwise: 1-factor rounds */
    EXCHANGE_TAG_GRID = 501,          /* grid: row and column phases */
    EXCHANGE_TAG_HYPERCUBE = 601,     /* hypercube: dimension rounds */
    EXCHANGE_TAG_SPARSE = 651,        /* sparse: the non-empty pieces */
    EXCHANGE_TAG_FIRST_FREE = 701,    /* the back-ends use no tag from here on */
    EXCHANGE_TAG_COUNT
};

#endif
