/*
 * exchange/model_sort.h: the count matrix a sample sort hands its exchange, modelled without
 * MPI for the schedule simulator.
 */
#ifndef SORTEX_EXCHANGE_MODEL_SORT_H
#define SORTEX_EXCHANGE_MODEL_SORT_H

#include <stdint.h>

#include "datagen/datagen.h"

/**
 * The P x P count matrix (keys) a P-rank sortex run would hand its exchange for the datagen
 * input @dp (P = dp->ranks, checked with datagen_check()): every rank slice generated and
 * sorted, then the sample, splitter and bucket phases with the sort's own rules (sort/sortex.h).
 * @epsilon and @oversample as in struct sortex_config (0: their defaults). Writes
 * counts[src * P + dst]; the caller owns it (room for P * P). Holds all n keys in memory.
 * Returns 0; UTIL_EUSAGE (one line) when the sort would refuse the sample size; UTIL_ENOMEM
 * (one line).
 */
int exchange_model_sort_counts(const struct datagen_params *dp, double epsilon, uint64_t oversample,
                               int threads, uint64_t *counts);

#endif
