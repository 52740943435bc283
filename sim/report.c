/*
 * sim/report.c: what sortex-sched prints: one CSV row per model, or a table with the instance in
 * its head and the model-specific figures below it (see sim.h).
 */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>

#include "exchange/machine.h"
#include "exchange/sched.h"
#include "util/util.h"

/* A byte count with a binary unit: "512 B", "1.5 KiB", "3.0 GiB". */
static const char *fmt_bytes(uint64_t b, char *buf, size_t cap)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = (double)b;
    int u = 0;
    while (x >= 1024.0 && u < 5) {
        x /= 1024.0;
        u++;
    }
    (void)snprintf(buf, cap, "%.*f %s", u == 0 ? 0 : 1, x, unit[u]);
    return buf;
}

/* Seconds with a readable unit; "-" for NAN. */
static const char *fmt_secs(double s, char *buf, size_t cap)
{
    if (isnan(s)) {
        (void)snprintf(buf, cap, "-");
    } else if (s < 1e-3) {
        (void)snprintf(buf, cap, "%.1f us", s * 1e6);
    } else if (s < 1.0) {
        (void)snprintf(buf, cap, "%.2f ms", s * 1e3);
    } else {
        (void)snprintf(buf, cap, "%.3f s", s);
    }
    return buf;
}

/* A number with @prec decimals, or "-" for NAN. */
static const char *fmt_num(double x, int prec, char *buf, size_t cap)
{
    if (isnan(x)) {
        (void)snprintf(buf, cap, "-");
    } else {
        (void)snprintf(buf, cap, "%.*f", prec, x);
    }
    return buf;
}

/* CSV: a comma, then @x in style 'g', 'f' or 'e' with @prec digits; NAN as an empty field. */
static void csv_num(FILE *f, double x, char style, int prec)
{
    fputc(',', f);
    if (isnan(x)) {
        return;
    }
    if (style == 'f') {
        fprintf(f, "%.*f", prec, x);
    } else if (style == 'e') {
        fprintf(f, "%.*e", prec, x);
    } else {
        fprintf(f, "%.*g", prec, x);
    }
}

const char sim_report_columns[] =
    "input,p,packet_bytes,h_packets,h_bytes,total_bytes,algo,backend,duplex,rounds,startups,"
    "steps,steps_per_h,bound_steps,bytes_moved,max_message,model_seconds,async_seconds,sched_"
    "seconds,predicted_seconds,path_startups,path_rndv,path_bytes,copy_bytes,sync_rounds,cache_share,"
    "alpha,beta,detail";

void sim_report_csv_row(FILE *f, const char *label, const struct exchange_model_case *c,
                        const struct exchange_ops *backend, const struct exchange_model_result *r)
{
    double per_h = r->h > 0 ? r->steps / (double)r->h : NAN;
    fprintf(f, "%s,%d,%llu,%llu,%llu,%llu,%s,%s,%s,%llu,%llu", label, c->p,
            (unsigned long long)r->packet_bytes, (unsigned long long)r->h,
            (unsigned long long)c->h_bytes, (unsigned long long)c->total_bytes, r->algo,
            backend->name,
            r->duplex, (unsigned long long)r->rounds, (unsigned long long)r->startups);
    csv_num(f, r->steps, 'g', 9);
    csv_num(f, per_h, 'f', 6);
    csv_num(f, r->bound, 'g', 9);
    fprintf(f, ",%llu,%llu", (unsigned long long)r->bytes_moved,
            (unsigned long long)r->max_message);
    csv_num(f, r->seconds, 'e', 6);
    csv_num(f, r->async_seconds, 'e', 6);
    csv_num(f, r->sched_seconds, 'e', 6);
    csv_num(f, r->predicted, 'e', 6);
    csv_num(f, r->path_startups, 'g', 10);
    csv_num(f, r->path_rndv, 'g', 10);
    csv_num(f, r->path_bytes, 'g', 12);
    csv_num(f, r->copy_bytes, 'g', 12);
    csv_num(f, r->sync_rounds, 'g', 10);
    csv_num(f, r->cache_share, 'f', 4);
    fprintf(f, ",%.6e,%.6e,%s\n", c->alpha, c->beta, r->detail);
}

void sim_report_table_head(FILE *f, const char *label, const struct exchange_model_case *c,
                           const struct exchange_model *const *models, int n)
{
    char b1[32], b2[32], b3[32];
    fprintf(f, "input   %s\n", label);
    fprintf(f, "P       %d\n", c->p);
    fprintf(f, "volume  %s off the diagonal; h = %s (the most one rank sends + receives)\n",
            fmt_bytes(c->total_bytes, b1, sizeof(b1)), fmt_bytes(c->h_bytes, b2, sizeof(b2)));
    fprintf(f, "packets %s each: h = %llu packets (most sent %llu, most received %llu)\n",
            fmt_bytes(c->packet_bytes, b3, sizeof(b3)), (unsigned long long)c->h,
            (unsigned long long)c->send_max, (unsigned long long)c->recv_max);
    /* Back-ends whose own rule cuts h differently: their packets are in their detail below. */
    for (int i = 0; !c->packet_fixed && i < n; i++) {
        const struct exchange_model *m = models[i];
        if (m->target_h != 0 && m->target_h != EXCHANGE_SCHED_TARGET_H) {
            fprintf(f, "        (%s's packets are its own, h / %llu: see its packet_bytes below)\n",
                    m->name, (unsigned long long)m->target_h);
        }
    }
    if (c->machine != NULL) {
        sim_report_machine(f, c->machine, c->p, c->alpha, c->beta);
    } else {
        fprintf(f, "model   alpha = %.3g us per start-up, beta = %.3g ns/B (%.2f GB/s)\n",
                c->alpha * 1e6, c->beta * 1e9, c->beta > 0 ? 1e-9 / c->beta : 0.0);
    }
    fprintf(f, "\n%-19s %-4s %6s %6s %9s %7s %9s %10s %10s %10s %10s %10s %10s\n", "algorithm",
            "dupl", "rounds", "msgs", "steps", "steps/h", "bound", "moved", "largest",
            "predicted", "model", "async", "sched");
}

void sim_report_machine(FILE *f, const struct exchange_machine *m, int p, double alpha,
                        double beta)
{
    char what[512];
    exchange_machine_describe(m, what, sizeof(what));
    fprintf(f, "machine %s\n", what);
    fprintf(f, "        alpha %.3g us a start-up, beta %.3g ns/B (%.2f GB/s; %.3g ns/B within its "
               "%.0f MiB cache), copies %.3g ns/B, %s\n",
            alpha * 1e6, beta * 1e9, beta > 0 ? 1e-9 / beta : 0.0, m->beta_cache * 1e9,
            m->llc_bytes / 1048576.0, m->copy * 1e9,
            m->shm ? "the ranks on one node" : "a network");
    if (m->shm) {
        fprintf(f, "        of %d cores%s\n", m->cores,
                p > m->cores ? ", fewer than the ranks: every round waits for the ranks' turns"
                             : "");
    } else {
        fprintf(f, "        %d rank(s) a node, %s duplex links\n", m->ranks_per_node,
                m->duplex >= 0.5 ? "half" : "full");
    }
    if (m->source == EXCHANGE_MACHINE_BUILTIN) {
        fprintf(f, "        not your machine: measure it with `mpirun -np P sortex-sched "
                   "--calibrate > machine.txt`\n"
                   "        on the nodes you run on, then give --machine machine.txt (or put it "
                   "in ~/.config/sortex/)\n");
    }
    fprintf(f, "        predicted: the machine's price of start-ups, bytes, copies and waits on "
               "the critical path; model: the alpha-beta time of the rounds alone\n");
}

void sim_report_table_row(FILE *f, const struct exchange_model_result *r)
{
    char s1[32], s2[32], s3[32], s4[32], s5[32], s6[32], s7[32], s8[32], s9[32];
    double per_h = r->h > 0 ? r->steps / (double)r->h : NAN;
    fprintf(f, "%-19s %-4s %6llu %6llu %9s %7s %9s %10s %10s %10s %10s %10s %10s\n", r->algo,
            r->duplex, (unsigned long long)r->rounds, (unsigned long long)r->startups,
            fmt_num(r->steps, 1, s1, sizeof(s1)), fmt_num(per_h, 3, s2, sizeof(s2)),
            fmt_num(r->bound, 1, s3, sizeof(s3)), fmt_bytes(r->bytes_moved, s4, sizeof(s4)),
            fmt_bytes(r->max_message, s5, sizeof(s5)), fmt_secs(r->predicted, s9, sizeof(s9)),
            fmt_secs(r->seconds, s6, sizeof(s6)), fmt_secs(r->async_seconds, s7, sizeof(s7)),
            fmt_secs(r->sched_seconds, s8, sizeof(s8)));
}

void sim_report_details(FILE *f, const struct exchange_model_result *r, int n)
{
    int head = 0;
    for (int a = 0; a < n; a++) {
        if (r[a].detail[0] != '\0') {
            fprintf(f, "%s%-19s %s\n", head++ ? "" : "\n", r[a].algo, r[a].detail);
        }
    }
}
