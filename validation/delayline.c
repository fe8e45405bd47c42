// A userspace constant-delay line on a TUN device, for network-namespace validation runs
// on kernels without netem (this machine's). Every packet read from the TUN device is
// written back into it DELAY microseconds later, in arrival order (a constant delay keeps
// FIFO order, so a ring buffer suffices). Routing decides what enters the device: see
// validation/netns_host.sh, which sends the ACK path (receiver -> sender) through it with
// a policy rule on the router's input interface.
//
//   cc -O2 -o delayline delayline.c && ./delayline IFNAME DELAY_US
//
// Timing: the thread sleeps with clock_nanosleep until the head packet is due, or polls
// the device; the added delay is DELAY plus the wake-up latency of this host (tens of
// microseconds on an idle core). Exits on SIGTERM/SIGINT. Prints counters on exit.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define RING 65536   // packets held at once (20 ms of 100 Mbit/s ACKs is < 1000)
#define MTU 2048

static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s; stop = 1; }

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct slot { uint64_t due; uint16_t len; unsigned char buf[MTU]; };
static struct slot ring[RING];

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s IFNAME DELAY_US\n", argv[0]); return 2; }
    uint64_t delay = strtoull(argv[2], NULL, 10) * 1000ull;
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
    if (fd < 0) { perror("open /dev/net/tun"); return 1; }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    strncpy(ifr.ifr_name, argv[1], IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) { perror("TUNSETIFF"); return 1; }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    fprintf(stderr, "delayline %s: %llu us\n", ifr.ifr_name, (unsigned long long)(delay / 1000));
    fflush(stderr);

    size_t head = 0, tail = 0;   // ring[head..tail) are waiting
    uint64_t forwarded = 0, overflow = 0, max_late_ns = 0, late_sum_ns = 0;
    while (!stop) {
        // drain the device
        for (;;) {
            struct slot *s = &ring[tail % RING];
            ssize_t n = read(fd, s->buf, MTU);
            if (n <= 0) break;
            if (tail - head >= RING) { overflow++; continue; }
            s->len = (uint16_t)n;
            s->due = now_ns() + delay;
            tail++;
        }
        // release what is due
        uint64_t t = now_ns();
        while (head < tail && ring[head % RING].due <= t) {
            struct slot *s = &ring[head % RING];
            uint64_t late = t - s->due;
            late_sum_ns += late;
            if (late > max_late_ns) max_late_ns = late;
            if (write(fd, s->buf, s->len) < 0 && errno != EAGAIN) perror("write");
            head++; forwarded++;
            t = now_ns();
        }
        // wait for a packet or the head's due time, whichever is first
        struct pollfd p = { .fd = fd, .events = POLLIN };
        struct timespec ts = { 0, 0 }, *tsp = NULL;
        if (head < tail) {
            uint64_t due = ring[head % RING].due;
            uint64_t wait = due > t ? due - t : 0;
            ts.tv_sec = (time_t)(wait / 1000000000ull);
            ts.tv_nsec = (long)(wait % 1000000000ull);
            tsp = &ts;
        }
        if (ppoll(&p, 1, tsp, NULL) < 0 && errno != EINTR) { perror("ppoll"); break; }
    }
    fprintf(stderr, "delayline %s: forwarded %llu overflow %llu mean_late_us %.1f max_late_us %.1f\n",
            ifr.ifr_name, (unsigned long long)forwarded, (unsigned long long)overflow,
            forwarded ? late_sum_ns / 1e3 / forwarded : 0.0, max_late_ns / 1e3);
    return 0;
}
