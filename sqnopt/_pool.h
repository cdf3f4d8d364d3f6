/* sqnopt's pool of worker threads for the compiled passes over the rows.
 *
 * Included by sqnopt/_parallel.pyx only (one pool per process); every other module reaches it
 * through the cdef functions that _parallel.pxd declares.
 *
 *     int sq_pool_run(int n_threads, Py_ssize_t n_tasks, sq_task_fn fn, void *ctx)
 *
 * runs fn(ctx, k, worker) once for every task k in [0, n_tasks), on at most n_threads threads:
 * the caller (worker 0) and up to n_threads - 1 pool threads (workers 1, 2, ...). Tasks are
 * handed out in index order through one atomic counter, so a thread that finishes early takes
 * the next task (a shared machine's busy core does not hold the pass up). Which thread runs a
 * task never changes what the task computes: callers give each task its own output slot and
 * combine the slots in task order afterwards (sqnopt/_parallel.pyx). The return value is the
 * number of threads that took part.
 *
 * Why a pool of its own rather than OpenMP (docs/parallel.md has the measurements):
 *   - fork: GNU libgomp's threads do not survive fork(), and a forked child that enters a
 *     parallel region after its parent did hangs (a multiprocessing worker, for one). Here a
 *     pthread_atfork handler forgets the parent's threads in the child, which starts its own.
 *   - one runtime per process, whatever compiled the other extensions (scikit-learn's wheels
 *     ship their own libgomp), and the same code with any C compiler that has POSIX threads
 *     (Apple's clang has no OpenMP).
 *   - a caller that finds the pool busy (fits running in several Python threads at once) runs
 *     its tasks itself instead of waiting or oversubscribing the cores; the results are the
 *     same either way.
 *   - the waiting policy: a thread that runs out of tasks polls for the next job for a short
 *     while (SQ_POOL_SPIN_NS: the passes of one solve follow each other within microseconds
 *     to milliseconds) and then sleeps on a condition variable, so an idle pool costs the
 *     machine nothing.
 * Without POSIX threads (SQ_POOL_SERIAL, e.g. MSVC) every task runs on the caller, with the
 * same results.
 */
#ifndef SQNOPT_POOL_H
#define SQNOPT_POOL_H

#include <Python.h>   /* Py_ssize_t */
#include <stdlib.h>
#include <string.h>

typedef void (*sq_task_fn)(void *ctx, Py_ssize_t task, int worker);
/* one block of an ordered pass: sums its rows into `out`, returns 0 or a status */
typedef int (*sq_block_fn)(void *ctx, Py_ssize_t block, double *out);

#if defined(_WIN32) || !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L \
    || defined(__STDC_NO_ATOMICS__)
#  ifndef SQ_POOL_SERIAL
#    define SQ_POOL_SERIAL 1
#  endif
#endif

/* the most threads one job uses (the caller included) */
#define SQ_POOL_MAX_THREADS 256

static int sq_pool_serial_tasks(Py_ssize_t n_tasks, sq_task_fn fn, void *ctx)
{
    Py_ssize_t k;
    for (k = 0; k < n_tasks; k++)
        fn(ctx, k, 0);
    return 1;
}

#if defined(SQ_POOL_SERIAL)

static int sq_pool_run(int n_threads, Py_ssize_t n_tasks, sq_task_fn fn, void *ctx)
{
    (void)n_threads;
    return sq_pool_serial_tasks(n_tasks, fn, ctx);
}

static int sq_pool_threads_available(void) { return 0; }
static int sq_pool_size(void) { return 0; }

#else

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#  define SQ_POOL_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#  define SQ_POOL_RELAX() __asm__ __volatile__("yield")
#else
#  define SQ_POOL_RELAX() ((void)0)
#endif

/* how long a waiting thread polls before it sleeps, in nanoseconds (polled by the clock, as a
 * pause instruction costs 10 to 150 cycles by CPU and more in a virtual machine that traps it):
 * the passes of one solve follow each other within microseconds to milliseconds. No polling
 * when a job has more threads than the machine has cores: a polling thread would take a core
 * from one with work. */
#ifndef SQ_POOL_SPIN_NS
#  define SQ_POOL_SPIN_NS 200000
#endif

#include <time.h>

static long long sq_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Poll `*cond` (a condition on shared state, re-evaluated) for at most `ns` nanoseconds:
 * a macro so that the condition is an expression of the caller's. */
#define SQ_POLL_WHILE(cond, ns)                                                    \
    do {                                                                             \
        long long sq_t0_ = -1;                                                       \
        int sq_k_;                                                                   \
        while ((ns) > 0 && (cond)) {                                                 \
            for (sq_k_ = 0; sq_k_ < 32 && (cond); sq_k_++)                           \
                SQ_POOL_RELAX();                                                     \
            if (sq_t0_ < 0)                                                          \
                sq_t0_ = sq_now_ns();                                                \
            else if (sq_now_ns() - sq_t0_ > (ns))                                    \
                break;                                                               \
        }                                                                            \
    } while (0)

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;          /* a new job (workers wait on it) */
    pthread_cond_t done;          /* the last task finished (the caller waits on it) */
    atomic_flag busy;             /* a job is being set up, running or closing */
    int n_workers;                /* pool threads created (workers 1..n_workers) */
    int n_sleeping;               /* workers blocked on `wake` (under mu) */
    int caller_sleeping;          /* the caller blocked on `done` (under mu) */
    atomic_long gen;              /* job generation, raised when a job is published */
    /* the current job: written before `closed` is cleared and `gen` raised */
    sq_task_fn fn;
    void *ctx;
    Py_ssize_t n_tasks;
    int n_threads;                /* the caller and workers 1..n_threads-1 may take tasks */
    atomic_llong spin_ns;         /* polling before sleeping, set by the last job */
    int n_cpus;                   /* online cores (0: not known yet) */
    atomic_long next;             /* next task to hand out */
    atomic_long completed;        /* tasks finished */
    atomic_int closed;            /* the job's tasks are all done: nobody may join it */
    atomic_int active;            /* workers inside the job (joined, not yet left) */
} sq_pool_t;

static sq_pool_t sq_pool = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
    ATOMIC_FLAG_INIT, 0, 0, 0, 0, NULL, NULL, 0, 0, SQ_POOL_SPIN_NS, 0, 0, 0, 1, 0
};
static int sq_pool_atfork_done = 0;

/* Take tasks until none is left; the thread that finishes the last one wakes a sleeping
 * caller. */
static void sq_pool_take_tasks(int worker)
{
    Py_ssize_t k, n = sq_pool.n_tasks;
    for (;;) {
        k = atomic_fetch_add(&sq_pool.next, 1);
        if (k >= n)
            break;
        sq_pool.fn(sq_pool.ctx, k, worker);
        if (atomic_fetch_add(&sq_pool.completed, 1) + 1 == n && worker != 0) {
            pthread_mutex_lock(&sq_pool.mu);
            if (sq_pool.caller_sleeping)
                pthread_cond_signal(&sq_pool.done);
            pthread_mutex_unlock(&sq_pool.mu);
        }
    }
}

static void *sq_pool_worker(void *arg)
{
    int id = (int)(Py_ssize_t)arg;
    long seen = 0, g;
    long long limit;
    for (;;) {
        /* wait for a job not seen yet: poll for a while, then sleep */
        limit = atomic_load_explicit(&sq_pool.spin_ns, memory_order_relaxed);
        SQ_POLL_WHILE(atomic_load(&sq_pool.gen) == seen, limit);
        g = atomic_load(&sq_pool.gen);
        if (g == seen) {
            pthread_mutex_lock(&sq_pool.mu);
            while ((g = atomic_load(&sq_pool.gen)) == seen) {
                sq_pool.n_sleeping++;
                pthread_cond_wait(&sq_pool.wake, &sq_pool.mu);
                sq_pool.n_sleeping--;
            }
            pthread_mutex_unlock(&sq_pool.mu);
        }
        seen = g;
        /* join job g unless it has closed or another has replaced it meanwhile (the fields
         * read below are then those of the job this thread has joined) */
        atomic_fetch_add(&sq_pool.active, 1);
        if (atomic_load(&sq_pool.gen) == g && !atomic_load(&sq_pool.closed)
                && id < sq_pool.n_threads)
            sq_pool_take_tasks(id);
        atomic_fetch_sub(&sq_pool.active, 1);
    }
    return NULL;
}

/* In a child made by fork() the parent's workers do not exist: start from an empty pool. */
static void sq_pool_atfork_child(void)
{
    pthread_mutex_init(&sq_pool.mu, NULL);
    pthread_cond_init(&sq_pool.wake, NULL);
    pthread_cond_init(&sq_pool.done, NULL);
    atomic_flag_clear(&sq_pool.busy);
    sq_pool.n_workers = 0;
    sq_pool.n_sleeping = 0;
    sq_pool.caller_sleeping = 0;
    atomic_store(&sq_pool.closed, 1);
    atomic_store(&sq_pool.active, 0);
}

/* Create workers until there are `want` of them (or creation fails); under `busy`. The
 * workers block every signal (they inherit the mask in force at their creation): signals go to
 * the threads that run Python, as they would without the pool. */
static void sq_pool_grow(int want)
{
    pthread_t th;
    pthread_attr_t attr;
    sigset_t all, old;
    if (!sq_pool_atfork_done) {
        if (pthread_atfork(NULL, NULL, sq_pool_atfork_child) != 0)
            return;                     /* without the handler a fork could hang: no threads */
        sq_pool_atfork_done = 1;
    }
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (sq_pool.n_workers < want) {
        if (pthread_create(&th, &attr, sq_pool_worker,
                           (void *)(Py_ssize_t)(sq_pool.n_workers + 1)) != 0)
            break;
        sq_pool.n_workers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

static int sq_pool_run(int n_threads, Py_ssize_t n_tasks, sq_task_fn fn, void *ctx)
{
    int spins, used;
    if (n_threads > SQ_POOL_MAX_THREADS)
        n_threads = SQ_POOL_MAX_THREADS;
    if ((Py_ssize_t)n_threads > n_tasks)
        n_threads = (int)n_tasks;
    if (n_threads <= 1)
        return sq_pool_serial_tasks(n_tasks, fn, ctx);
    if (atomic_flag_test_and_set(&sq_pool.busy))
        return sq_pool_serial_tasks(n_tasks, fn, ctx);   /* another caller's job is running */
    if (sq_pool.n_workers < n_threads - 1)
        sq_pool_grow(n_threads - 1);
    if (sq_pool.n_cpus == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        sq_pool.n_cpus = c > 0 ? (int)c : 1;
    }
    used = n_threads <= sq_pool.n_workers + 1 ? n_threads : sq_pool.n_workers + 1;
    if (used <= 1) {
        atomic_flag_clear(&sq_pool.busy);
        return sq_pool_serial_tasks(n_tasks, fn, ctx);
    }
    /* publish the job */
    sq_pool.fn = fn;
    sq_pool.ctx = ctx;
    sq_pool.n_tasks = n_tasks;
    sq_pool.n_threads = used;
    atomic_store_explicit(&sq_pool.spin_ns, used <= sq_pool.n_cpus ? SQ_POOL_SPIN_NS : 0,
                          memory_order_relaxed);
    atomic_store(&sq_pool.next, 0);
    atomic_store(&sq_pool.completed, 0);
    atomic_store(&sq_pool.closed, 0);
    pthread_mutex_lock(&sq_pool.mu);
    atomic_fetch_add(&sq_pool.gen, 1);
    if (sq_pool.n_sleeping > 0)
        pthread_cond_broadcast(&sq_pool.wake);
    pthread_mutex_unlock(&sq_pool.mu);
    /* take tasks too, then wait for the tasks others are running (not for threads that have
     * not started: a descheduled worker holds nothing up) */
    sq_pool_take_tasks(0);
    SQ_POLL_WHILE(atomic_load(&sq_pool.completed) < n_tasks,
                  used <= sq_pool.n_cpus ? SQ_POOL_SPIN_NS : 0);
    if (atomic_load(&sq_pool.completed) < n_tasks) {
        pthread_mutex_lock(&sq_pool.mu);
        sq_pool.caller_sleeping = 1;
        while (atomic_load(&sq_pool.completed) < n_tasks)
            pthread_cond_wait(&sq_pool.done, &sq_pool.mu);
        sq_pool.caller_sleeping = 0;
        pthread_mutex_unlock(&sq_pool.mu);
    }
    /* close the job and let the workers inside leave before its fields are reused */
    atomic_store(&sq_pool.closed, 1);
    spins = 0;
    while (atomic_load(&sq_pool.active) > 0) {
        if (++spins < 1000)
            SQ_POOL_RELAX();
        else
            sched_yield();              /* a worker descheduled between its join and leave */
    }
    atomic_flag_clear(&sq_pool.busy);
    return used;
}

static int sq_pool_threads_available(void) { return 1; }
static int sq_pool_size(void) { return sq_pool.n_workers; }

#endif  /* SQ_POOL_SERIAL */


/* ---- ordered passes: blocks that sum into one vector ------------------------------------------
 *
 *     int sq_ordered_run(int n_threads, Py_ssize_t n_blocks, sq_block_fn fn, void *ctx,
 *                        double *out, Py_ssize_t n_vec, double *ring, Py_ssize_t n_ring,
 *                        int *status)
 *
 * runs fn(ctx, b, out_b) for every block b in [0, n_blocks) and leaves in `out` (n_vec doubles)
 *
 *     out[j] = ((out_0[j] + p_1[j]) + p_2[j]) + ... + p_{n_blocks - 1}[j]
 *
 * where block 0 sums directly into `out` (out_0: `out` as the caller left it, plus block 0's
 * terms) and block b > 0 into a zeroed vector p_b: the additions of the blocks' partial vectors
 * in block order, whichever thread ran which block and however many there were. The partial
 * vectors live in a ring of n_ring buffers (`ring`, n_ring * n_vec doubles): block b > 0 uses
 * buffer (b - 1) % n_ring once block b - n_ring's has been added to `out`, so the memory is
 * n_ring vectors (a few per thread, warm in cache), not one per block. Blocks are handed out in
 * order, and whichever thread finds the next block finished adds it (one at a time): a thread
 * waiting for a buffer adds finished blocks meanwhile, and only waits for blocks that are being
 * run, so the pass cannot deadlock. status[b] is block b's return value. Returns the number of
 * threads that took part. With one thread, or n_ring = 1, the blocks run one after another,
 * each added as it ends.
 */

static void sq_ordered_add(double *out, const double *p, Py_ssize_t n)
{
    Py_ssize_t j;
    for (j = 0; j < n; j++)
        out[j] += p[j];
}

#if defined(SQ_POOL_SERIAL)

static int sq_ordered_run(int n_threads, Py_ssize_t n_blocks, sq_block_fn fn, void *ctx,
                          double *out, Py_ssize_t n_vec, double *ring, Py_ssize_t n_ring,
                          int *status)
{
    Py_ssize_t b;
    (void)n_threads;
    (void)n_ring;
    for (b = 0; b < n_blocks; b++) {
        if (b == 0 || n_vec <= 0) {
            status[b] = fn(ctx, b, out);
            continue;
        }
        memset(ring, 0, n_vec * sizeof(double));
        status[b] = fn(ctx, b, ring);
        sq_ordered_add(out, ring, n_vec);
    }
    return 1;
}

#else

typedef struct {
    sq_block_fn fn;
    void *ctx;
    double *out;
    double *ring;
    Py_ssize_t n_vec;
    Py_ssize_t n_ring;
    Py_ssize_t n_blocks;
    int *status;
    atomic_char *done;            /* per block: its terms are all in its vector */
    atomic_long added;            /* blocks added to out, in order (block 0 needs no adding) */
    atomic_flag adding;           /* one thread adds at a time */
} sq_ordered_t;

/* Add the finished blocks to `out`, in order, unless another thread is doing so. */
static void sq_ordered_advance(sq_ordered_t *job)
{
    long f;
    for (;;) {
        if (atomic_flag_test_and_set(&job->adding))
            return;
        while ((f = atomic_load(&job->added)) < job->n_blocks && atomic_load(&job->done[f])) {
            if (f > 0)
                sq_ordered_add(job->out, job->ring + ((f - 1) % job->n_ring) * job->n_vec,
                               job->n_vec);
            atomic_store(&job->added, f + 1);
        }
        atomic_flag_clear(&job->adding);
        /* a block that finished while this thread held the flag found it taken: look again */
        f = atomic_load(&job->added);
        if (!(f < job->n_blocks && atomic_load(&job->done[f])))
            return;
    }
}

static void sq_ordered_task(void *ctx, Py_ssize_t b, int worker)
{
    sq_ordered_t *job = (sq_ordered_t *)ctx;
    double *out = job->out;
    int spins = 0;
    (void)worker;
    if (b > 0) {
        /* buffer (b - 1) % n_ring is free once block b - n_ring has been added */
        while (b > job->n_ring && atomic_load(&job->added) <= b - job->n_ring) {
            sq_ordered_advance(job);
            if (++spins < 1000)
                SQ_POOL_RELAX();
            else
                sched_yield();
        }
        out = job->ring + ((b - 1) % job->n_ring) * job->n_vec;
        memset(out, 0, job->n_vec * sizeof(double));
    }
    job->status[b] = job->fn(job->ctx, b, out);
    atomic_store(&job->done[b], 1);
    sq_ordered_advance(job);
}

static int sq_ordered_run(int n_threads, Py_ssize_t n_blocks, sq_block_fn fn, void *ctx,
                          double *out, Py_ssize_t n_vec, double *ring, Py_ssize_t n_ring,
                          int *status)
{
    sq_ordered_t job;
    Py_ssize_t b;
    int used;
    if (n_blocks <= 0)
        return 1;
    if (n_vec <= 0 || n_ring < 1) {
        for (b = 0; b < n_blocks; b++)     /* nothing to add: blocks write their own slots */
            status[b] = fn(ctx, b, out);
        return 1;
    }
    job.done = (atomic_char *)calloc((size_t)n_blocks, sizeof(atomic_char));
    if (job.done == NULL) {
        /* no memory for the flags: one block after another through one buffer */
        for (b = 0; b < n_blocks; b++) {
            if (b == 0) {
                status[b] = fn(ctx, b, out);
                continue;
            }
            memset(ring, 0, n_vec * sizeof(double));
            status[b] = fn(ctx, b, ring);
            sq_ordered_add(out, ring, n_vec);
        }
        return 1;
    }
    job.fn = fn;
    job.ctx = ctx;
    job.out = out;
    job.ring = ring;
    job.n_vec = n_vec;
    job.n_ring = n_ring;
    job.n_blocks = n_blocks;
    job.status = status;
    atomic_init(&job.added, 0);
    atomic_flag_clear(&job.adding);
    used = sq_pool_run(n_threads, n_blocks, sq_ordered_task, &job);
    sq_ordered_advance(&job);           /* (every block is done: whatever is left, added) */
    free(job.done);
    return used;
}

#endif  /* SQ_POOL_SERIAL */
#endif  /* SQNOPT_POOL_H */
