/*
 * exchange/sched.h: schedules for h-relations, after Sanders and Solis-Oba, "How helpers hasten
 * h-relations" ([SS01] in the README). Pure C, no MPI: the scheduled exchange back-ends compute a
 * schedule here (every rank the same one, deterministically) and then execute it.
 *
 * The problem. P PEs; PE i must send m[i][j] packets to PE j. h is the largest number of packets
 * a PE sends plus receives (the diagonal m[i][i] is a local copy and takes no part). In the
 * half-duplex model a PE either sends or receives one packet per step; in the full-duplex model
 * it may send one and receive one.
 *
 * Packets and bytes. The schedule works on packet counts only. The executor picks a packet size
 * S bytes (from the data, so that h stays moderate) and a message of b bytes becomes
 * exchange_sched_packets(b, S) = ceil(b / S) packets, the last one short. Offsets and lengths in
 * a schedule count units of one fifth of a packet (forwarding splits packets into five pieces);
 * exchange_sched_bytes() maps a unit range to its byte range, clipped to b, so the pieces of a
 * message partition its bytes exactly (a piece of the short last packet may be empty).
 *
 * The schedule. A sequence of steps, each with a duration (units) and a set of transfers. A
 * transfer moves one contiguous piece [off, off + len) of one message (msg_src -> msg_dst) from
 * src to dst, either directly or as the first or second hop of a forwarded piece. Runs of packets
 * of one message travel together as "super-packets": one transfer of n packets (5n units), or
 * one fifth of such a run (n units), so the schedule's size follows the number of distinct
 * matchings of the decomposition, not the number of packets.
 *
 * Walking it (rank r): for k in rank_begin[r] .. rank_begin[r + 1] - 1, x = &xfers[rank_xfers[k]]
 * lists r's transfers in step order. If x->src == r, send the piece: from the send buffer of
 * message (r, x->msg_dst) for a DIRECT or HOP1 transfer, from the forwarding buffer for HOP2. If
 * x->dst == r, receive it: into the receive buffer of message (x->msg_src, r) for DIRECT or HOP2,
 * into the forwarding buffer for HOP1. In a half-duplex schedule a rank has at most one transfer
 * per step, so a blocking send or receive per entry is correct; in a full-duplex schedule a rank
 * may have one send and one receive in the same step (pair them, e.g. MPI_Sendrecv). A forwarded
 * piece's second hop comes in the step right after its first hop, and a PE holds at most one
 * piece in transit, so a forwarding buffer of fwd_units_max units suffices.
 */
#ifndef SORTEX_EXCHANGE_SCHED_H
#define SORTEX_EXCHANGE_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Units per packet: offsets and lengths in a schedule count fifths of a packet. */
#define EXCHANGE_SCHED_UNITS 5

/** How a transfer moves its piece. */
enum exchange_sched_hop {
    EXCHANGE_SCHED_DIRECT = 0, /* message source straight to message destination */
    EXCHANGE_SCHED_HOP1 = 1,   /* message source to a forwarding PE */
    EXCHANGE_SCHED_HOP2 = 2,   /* forwarding PE to message destination */
    EXCHANGE_SCHED_HOP_COUNT
};

/** The communication model a schedule is valid in. */
enum exchange_sched_model {
    EXCHANGE_SCHED_HALF_DUPLEX = 0, /* per step a PE sends one piece or receives one */
    EXCHANGE_SCHED_FULL_DUPLEX = 1, /* per step a PE sends at most one and receives at most one */
    EXCHANGE_SCHED_MODEL_COUNT
};

/** One transfer: a piece of one message moved over one hop in one step. */
struct exchange_sched_xfer {
    uint64_t step;    /* index of its step */
    uint64_t off;     /* first unit of the piece within the message */
    uint64_t len;     /* units, > 0, at most the step's duration */
    uint32_t src;     /* sender of this hop */
    uint32_t dst;     /* receiver of this hop */
    uint32_t msg_src; /* the message: its original source ... */
    uint32_t msg_dst; /* ... and its final destination */
    uint8_t hop;      /* enum exchange_sched_hop */
};

/**
 * A schedule. All arrays are owned by the schedule; free it with exchange_sched_free().
 * Transfers are stored by step: step t holds xfers[step_begin[t] .. step_begin[t + 1] - 1].
 */
struct exchange_sched {
    const char *algo;                /* name of the algorithm that built it */
    enum exchange_sched_model model; /* the model it is valid in */
    int p;                           /* number of PEs */
    uint64_t h;                      /* max over PEs of packets sent + received */
    uint64_t send_max;               /* max over PEs of packets sent */
    uint64_t recv_max;               /* max over PEs of packets received */
    uint64_t matchings;              /* colour classes handed over with multiplicities */
    uint64_t length;                 /* sum of step durations, units (steps = length / 5) */
    uint64_t nsteps;                 /* number of steps */
    uint64_t *step_begin;            /* nsteps + 1 offsets into xfers */
    uint64_t *step_units;            /* duration of each step, units */
    uint64_t nxfers;                 /* number of transfers */
    struct exchange_sched_xfer *xfers;
    uint64_t *rank_begin; /* p + 1 offsets into rank_xfers */
    uint64_t *rank_xfers; /* per rank, indices of its transfers (as src or dst), in step order */
    uint64_t fwd_units_max; /* largest forwarded piece, units (0: nothing is forwarded) */
};

/**
 * Builds a schedule for the p x p matrix @m (row-major, m[i * p + j] packets from i to j; the
 * diagonal is ignored). Stores a new schedule in *@out. Returns 0, UTIL_EUSAGE for p < 1 or
 * counts so large that unit offsets would overflow (message printed), or UTIL_ENOMEM.
 */
typedef int exchange_sched_fn(int p, const uint64_t *m, struct exchange_sched **out);

/**
 * Direct delivery, half-duplex (paper §2.1): at most 3 * ceil(h / 2) steps. Packets are not
 * split (every offset and length is a multiple of 5 units). See exchange_sched_fn.
 */
int exchange_sched_direct(int p, const uint64_t *m, struct exchange_sched **out);

/**
 * Forwarding through idle PEs, half-duplex (paper §2.2-2.4): at most 12/5 * ceil(h / 2) steps
 * (<= 6/5 (h + 1)) for even p; for odd p at most 12/5 * ceil(h / 2) + ceil(ceil(h / 2) /
 * ceil(p / 4)) steps, which is the paper's (6/5 + 2/p)(h + 1) for even h and at most one step
 * more for odd h (see forward_removal() in sched_build.c); never longer than direct's
 * schedule (same colour classes; for odd p, when direct's is shorter it is returned, so the
 * schedule may then contain no forwarding). Packets are split in fifths.
 * Size: about 5 transfers per packet run, plus 2 per forwarded fifth; for odd p a colour class
 * that needs the §2.4 removals is split into up to ~p/2 variants, which happens only when
 * nearly every PE has the maximum degree (e.g. the paper's lower-bound instance). See
 * exchange_sched_fn.
 */
int exchange_sched_forward(int p, const uint64_t *m, struct exchange_sched **out);

/**
 * Direct delivery, full-duplex: exactly max(send_max, recv_max) steps, the optimum. Packets are
 * not split. See exchange_sched_fn.
 */
int exchange_sched_fullduplex(int p, const uint64_t *m, struct exchange_sched **out);

/** Frees a schedule; NULL is fine. */
void exchange_sched_free(struct exchange_sched *s);

/**
 * Checks @s against the matrix @m it was built for: shapes and indices; every piece of every
 * off-diagonal message delivered exactly once (the delivered pieces of message (i, j) partition
 * [0, 5 m[i][j]) units) and nothing else delivered; in every step no PE both sends and receives
 * (half-duplex) and none sends twice or receives twice; every forwarded piece takes exactly two
 * hops through one forwarder, the first before the second, and a PE never holds more than one
 * piece in transit; s->length, s->fwd_units_max and the per-rank index agree with the transfers.
 * Stores the length in units in *@length (may be NULL). Returns 0 when valid; otherwise
 * UTIL_EUSAGE and, if @why is not NULL, a description of the first violation in @why (no message
 * printed); UTIL_ENOMEM if it could not allocate its work arrays.
 */
int exchange_sched_validate(const struct exchange_sched *s, int p, const uint64_t *m,
                            uint64_t *length, char *why, size_t whylen);

/**
 * Degree statistics of @m: *@h = max over PEs of packets sent + received, *@send_max and
 * *@recv_max the largest row and column sums (diagonal excluded). Any pointer may be NULL.
 * Returns 0, or UTIL_EUSAGE (no message) when a sum overflows 64 bits.
 */
int exchange_sched_degrees(int p, const uint64_t *m, uint64_t *h, uint64_t *send_max,
                           uint64_t *recv_max);

/**
 * Packets the heaviest PE's load is cut into when the packet size is left to the data, by direct
 * and fullduplex. Every packet step costs a start-up and a hand-over between two PEs; finer
 * packets only pay where the schedule is executed one step at a time on half-duplex links, where a
 * message's short last packet leaves a step part idle. 32 was measured (sortex-xbench against
 * MPI_Alltoallv on the sort's count matrices, P = 3 to 8) as fast as 16 and faster than 64 and
 * 256 on shared memory, while sortex-sched's model keeps the step counts close to those of fine
 * packets; 8 made direct and fullduplex faster on one node only at moderate volumes and, in the
 * model, slower on links. The figures are in the commit that set it (git log -S
 * EXCHANGE_SCHED_TARGET_H). sortex-sched --target-h models other packet sizes, and
 * SORTEX_SCHED_TARGET_H sets one for a run (exchange/scheduled.c).
 */
#define EXCHANGE_SCHED_TARGET_H 32
/**
 * The same for forward, whose transfers are fifths of packets: at 8 packets its pieces (h / 40)
 * are about as large as direct's packets (h / 32), so it starts about as many messages as direct;
 * at 32 it would start five times as many, and on one node, where a transfer is a copy, their
 * start-ups would dominate its time. The price is on half-duplex links run one step at a time,
 * where coarse packets balance worse (sortex-sched's async model, and the emulated half-duplex
 * cluster). The measurements behind the choice are in the commit that set it (git log -S
 * EXCHANGE_SCHED_TARGET_H_FORWARD).
 */
#define EXCHANGE_SCHED_TARGET_H_FORWARD 8
/** The most packets a run (SORTEX_SCHED_TARGET_H) or sortex-sched --target-h may ask for. */
#define EXCHANGE_SCHED_TARGET_H_MAX 1048576
/**
 * Smallest packet the data may choose, in bytes. Every packet step costs a message start-up and
 * a synchronisation of its two PEs, so tiny packets make small exchanges slow (512-byte packets
 * at 64 KiB per rank took several times as long as MPI_Alltoallv). 64 KiB keeps a packet's
 * start-up below a tenth of its transfer time on shared memory and on networks of up to ~10 GB/s.
 */
#define EXCHANGE_SCHED_MIN_PACKET ((uint64_t)64 << 10)
/**
 * Packet sizes for elements of @elem_bytes bytes are multiples of this many bytes: five elements,
 * so that a fifth of a packet (the smallest piece a schedule moves) is whole elements and no
 * element is ever split between pieces, and of 40 bytes, so that the packets of 8-byte keys
 * and of bare bytes (@elem_bytes 1) stay what they were: 5 lcm(@elem_bytes, 8) bytes (40 for
 * 1, 2, 4 or 8 bytes, 520 for 13, 1000 for 100). @elem_bytes 0 is taken as 1.
 */
uint64_t exchange_sched_quantum(uint64_t elem_bytes);

/**
 * The packet size for the p x p matrix @m (row-major, in units of @unit_bytes bytes: the
 * elements themselves, or 1 for a matrix of bytes; the diagonal is ignored) of elements of
 * @elem_bytes bytes: the heaviest PE's bytes sent plus received over @target_h packets (0:
 * EXCHANGE_SCHED_TARGET_H; each back-end passes its algorithm's target_h), at least
 * EXCHANGE_SCHED_MIN_PACKET, rounded up to a multiple of exchange_sched_quantum(@elem_bytes). So
 * h is about @target_h packets for big exchanges and small for small ones. Sums saturate
 * instead of overflowing.
 */
uint64_t exchange_sched_packet_bytes(int p, const uint64_t *m, uint64_t unit_bytes,
                                     uint64_t elem_bytes, uint64_t target_h);

/** Number of packets of @packet_bytes bytes (> 0) for a message of @msg_bytes: ceil(b / S). */
uint64_t exchange_sched_packets(uint64_t msg_bytes, uint64_t packet_bytes);

/**
 * Maps the unit range [@off, @off + @len) of a message of @msg_bytes bytes in packets of
 * @packet_bytes bytes to bytes: unit u starts at byte floor(u * S / 5), clipped to msg_bytes.
 * Stores the first byte in *@byte_off and the count in *@byte_len (0 for a piece past the end).
 */
void exchange_sched_bytes(uint64_t msg_bytes, uint64_t packet_bytes, uint64_t off, uint64_t len,
                          uint64_t *byte_off, uint64_t *byte_len);

/**
 * Marks the transfers an executor may send as one message with the next: join[i] = 1 when
 * transfer i moves a piece straight to its destination (DIRECT) and the transfer that follows it
 * in its sender's walk and in its receiver's walk is the same one, also DIRECT between the same
 * two PEs, continuing the piece (its first unit is i's last + 1); otherwise 0. Neither PE has
 * anything to do between the two steps, so moving the second piece with the first delays no
 * other transfer of either, and both PEs see the joined message at the same place in their walks.
 * @join has s->nxfers entries. Returns 0 or UTIL_ENOMEM.
 */
int exchange_sched_joins(const struct exchange_sched *s, uint8_t *join);

/** Prints @s readably, one line per transfer grouped by step (for debugging and tests). */
void exchange_sched_print(FILE *out, const struct exchange_sched *s);

/** A scheduling algorithm: how to build its schedules, and what they guarantee. */
struct exchange_sched_algo {
    const char *name; /* "direct", "forward", "fullduplex" (for messages) */
    exchange_sched_fn *build;
    enum exchange_sched_model model;
    /** Guaranteed upper bound in steps for p PEs and the degree statistics of a matrix. */
    double (*bound)(int p, uint64_t h, uint64_t send_max, uint64_t recv_max);
};

/** The three algorithms; the back-ends of exchange/scheduled.c run one each. */
extern const struct exchange_sched_algo exchange_sched_algo_direct;
extern const struct exchange_sched_algo exchange_sched_algo_forward;
extern const struct exchange_sched_algo exchange_sched_algo_fullduplex;

#endif
