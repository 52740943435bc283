/*
 * tests/mpich/yield.c: lets MPICH 4.0's ranks share cores, for the MPICH suite
 * (tests/62-mpich.bats), which runs up to 5 ranks on a 2-core machine.
 *
 * MPICH's ch4 device (Debian's is ch4:ucx) waits for a message by polling, and 4.0 never gives
 * the core away while it polls (MPIR_CVAR_POLLS_BEFORE_YIELD is ch3's; the progress throttle,
 * MPIR_CVAR_CH4_PROGRESS_THROTTLE, came in 2025). With more ranks than cores every step of a
 * collective then waits for a scheduler time slice: an allreduce of one int at P = 5 on 2 cores
 * takes 15 ms instead of 15 us, and a small sort 1.7 s instead of 0.4 s. Open MPI yields by
 * itself when it is oversubscribed.
 *
 * Preloaded (LD_PRELOAD) into the ranks, this wraps UCX's ucp_worker_progress(), which MPICH's
 * progress loop calls on every pass, and yields the core after 64 passes in a row that found
 * nothing to do. It changes no message and no result, only who runs while a rank waits; with a
 * core per rank sched_yield() returns at once. Without UCX (another MPICH device) it is never
 * called and changes nothing.
 *
 *   cc -shared -fPIC -O2 -o yield.so tests/mpich/yield.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

/* Idle passes before the core is given away: 1 and 64 measured alike, 64 costs less when
 * messages are about to arrive. */
#define IDLE_PASSES 64

typedef unsigned (*progress_fn)(void *worker);

/* UCX's declaration is `unsigned ucp_worker_progress(ucp_worker_h worker)`: the same ABI. */
unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn real;
    static __thread unsigned idle;
    if (real == NULL) {
        real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
        if (real == NULL) {
            return 0; /* not linked against UCX: nothing to progress */
        }
    }
    unsigned events = real(worker);
    if (events != 0) {
        idle = 0;
    } else if (++idle >= IDLE_PASSES) {
        idle = 0;
        (void)sched_yield();
    }
    return events;
}
