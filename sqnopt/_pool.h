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
 *     while (SQ_POOL_SPIN polls: the passes of one solve follow each other within
 *     microseconds to milliseconds) and then sleeps on a condition variable, so an idle pool
 *     costs the machine nothing.
 * Without POSIX threads (SQ_POOL_SERIAL, e.g. MSVC) every task runs on the caller, with the
 * same results.
 */
#ifndef SQNOPT_POOL_H
#define SQNOPT_POOL_H

#include <Python.h>   /* Py_ssize_t */

typedef void (*sq_task_fn)(void *ctx, Py_ssize_t task, int worker);

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

/* polls of the job counter before a waiting thread sleeps: a few tens of microseconds (a
 * pause instruction costs 10 to 150 cycles by CPU, more in a virtual machine that traps it). No
 * polling when a job has more threads than the machine has cores: a polling thread would take
 * a core from one with work. */
#ifndef SQ_POOL_SPIN
#  define SQ_POOL_SPIN 1000
#endif

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
    atomic_int spin;              /* polls before sleeping, set by the last job */
    int n_cpus;                   /* online cores (0: not known yet) */
    atomic_long next;             /* next task to hand out */
    atomic_long completed;        /* tasks finished */
    atomic_int closed;            /* the job's tasks are all done: nobody may join it */
    atomic_int active;            /* workers inside the job (joined, not yet left) */
} sq_pool_t;

static sq_pool_t sq_pool = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
    ATOMIC_FLAG_INIT, 0, 0, 0, 0, NULL, NULL, 0, 0, SQ_POOL_SPIN, 0, 0, 0, 1, 0
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
    int spins, limit;
    for (;;) {
        /* wait for a job not seen yet: poll for a while, then sleep */
        spins = 0;
        limit = atomic_load_explicit(&sq_pool.spin, memory_order_relaxed);
        while ((g = atomic_load(&sq_pool.gen)) == seen && spins < limit) {
            SQ_POOL_RELAX();
            spins++;
        }
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
    atomic_store_explicit(&sq_pool.spin, used <= sq_pool.n_cpus ? SQ_POOL_SPIN : 0,
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
    spins = 0;
    while (atomic_load(&sq_pool.completed) < n_tasks && spins < SQ_POOL_SPIN
           && used <= sq_pool.n_cpus) {
        SQ_POOL_RELAX();
        spins++;
    }
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
#endif  /* SQNOPT_POOL_H */
