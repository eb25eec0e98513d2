// The system-call floor of motiond's delivery benchmark (Docs/Performance.md, "Delivery fidelity"): what the
// kernel work alone costs, with no Swift, no rendering, no D-Bus.
//
// Three threads, as in ServiceBenchmarkTests.fidelity: a feeder writes one 24-byte scan every 1 ms (absolute
// CLOCK_MONOTONIC deadlines) to a non-blocking pipe; a "service" thread waits in epoll_wait (edge-triggered) on
// the pipe, reads what came, and for each scan writes a ready-made line to every stream due (64 streams at the
// benchmark's intervals, each a non-blocking pipe, as motiond's, or with `socket` an AF_UNIX stream socket pair,
// send(MSG_DONTWAIT | MSG_NOSIGNAL), as motiond's before); a
// client thread polls the 64 sockets (10 ms timeout) and reads them. It prints the service thread's CPU time as
// a share of one core (CLOCK_THREAD_CPUTIME_ID), over the window after a 2 s warm-up.
//
// Build and run: cc -O2 -pthread -o /tmp/delivery-floor Benchmarks/DeliveryFloor/delivery-floor.c &&
// /tmp/delivery-floor [seconds, default 20] [pipe (default) | socket]
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { STREAMS = 64 };

static int pipe_fds[2];
static int service_ends[STREAMS], client_ends[STREAMS];
static int periods[STREAMS];  // in scans (ms)
static size_t lengths[STREAMS];
static atomic_int stop_all;
static atomic_long records_read;
static double service_cpu_start, service_cpu_end;
static atomic_int phase;  // 0 warm-up, 1 measuring, 2 stop
static int use_sockets;

static double thread_cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *feeder(void *unused) {
    (void)unused;
    unsigned char scan[24] = {0};
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&stop_all)) {
        next.tv_nsec += 1000000;
        if (next.tv_nsec >= 1000000000) { next.tv_nsec -= 1000000000; next.tv_sec += 1; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        if (write(pipe_fds[1], scan, sizeof scan) < 0 && errno != EAGAIN) perror("write");
    }
    return NULL;
}

static void *service(void *unused) {
    (void)unused;
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN | EPOLLET, .data.fd = pipe_fds[0]};
    epoll_ctl(epoll, EPOLL_CTL_ADD, pipe_fds[0], &event);
    static char line[512];
    memset(line, '1', sizeof line);
    unsigned char buffer[4096];
    long scan = 0;
    int measuring = 0;
    while (!atomic_load(&stop_all)) {
        struct epoll_event ready[4];
        if (epoll_wait(epoll, ready, 4, 100) <= 0) continue;
        for (;;) {
            ssize_t got = read(pipe_fds[0], buffer, sizeof buffer);
            if (got <= 0) break;
            for (ssize_t i = 0; i < got / 24; i++, scan++) {
                for (int s = 0; s < STREAMS; s++) {
                    if (scan % periods[s] != 0) continue;
                    if (use_sockets)
                        send(service_ends[s], line, lengths[s], MSG_DONTWAIT | MSG_NOSIGNAL);
                    else
                        (void)!write(service_ends[s], line, lengths[s]);
                }
            }
            if (got < (ssize_t)sizeof buffer) break;  // a short read: the pipe is empty
        }
        int now = atomic_load(&phase);
        if (now == 1 && !measuring) { measuring = 1; service_cpu_start = thread_cpu(); }
        if (now == 2 && measuring == 1) { measuring = 2; service_cpu_end = thread_cpu(); }
    }
    return NULL;
}

static void *client(void *unused) {
    (void)unused;
    struct pollfd polled[STREAMS];
    for (int s = 0; s < STREAMS; s++) polled[s] = (struct pollfd){.fd = client_ends[s], .events = POLLIN};
    static char buffer[65536];
    while (!atomic_load(&stop_all)) {
        if (poll(polled, STREAMS, 10) <= 0) continue;
        for (int s = 0; s < STREAMS; s++) {
            if (!(polled[s].revents & POLLIN)) continue;
            ssize_t got = read(client_ends[s], buffer, sizeof buffer);
            if (got > 0) atomic_fetch_add(&records_read, 1);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 20;
    use_sockets = argc > 2 && strcmp(argv[2], "socket") == 0;
    // The intervals (ms) and kinds of ServiceBenchmarkTests.fidelityStreams; line lengths of a typical record:
    // samples CSV, samples JSON Lines, device motion CSV, device motion JSON Lines (bytes).
    const int intervals[16] = {1, 2, 5, 10, 20, 40, 50, 100, 200, 250, 500, 1000, 1, 3, 10, 100};
    const size_t kinds[4] = {70, 150, 230, 420};
    for (int i = 0; i < STREAMS; i++) {
        int connection = i / 4;
        periods[i] = intervals[(i + connection) % 16];
        lengths[i] = kinds[connection % 4];
        int pair[2];  // [0]: the service's (write) end, [1]: the client's
        if (use_sockets) {
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) { perror("socketpair"); return 1; }
            int size = 128 * 1024;
            setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        } else {
            int ends[2];
            if (pipe2(ends, O_CLOEXEC) != 0) { perror("pipe2"); return 1; }
            pair[0] = ends[1];
            pair[1] = ends[0];
        }
        fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK);
        service_ends[i] = pair[0];
        client_ends[i] = pair[1];
    }
    if (pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) { perror("pipe2"); return 1; }
    pthread_t threads[3];
    pthread_create(&threads[0], NULL, service, NULL);
    pthread_create(&threads[1], NULL, client, NULL);
    pthread_create(&threads[2], NULL, feeder, NULL);
    sleep(2);
    long read_before = atomic_load(&records_read);
    atomic_store(&phase, 1);
    sleep(seconds);
    atomic_store(&phase, 2);
    long read_after = atomic_load(&records_read);
    usleep(300000);
    atomic_store(&stop_all, 1);
    for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
    double cpu = service_cpu_end - service_cpu_start;
    printf("%s, window %d s: service thread CPU %.3f s = %.2f %% of one core; reads by the client %.0f /s\n",
           use_sockets ? "socket pairs" : "pipes", seconds, cpu, 100 * cpu / seconds,
           (double)(read_after - read_before) / seconds);
    return 0;
}
