/* native_load: a load generator for the native Handle protocol (RFC 3652), for
 * benchmarks/bench_native.py, which compiles it with the C compiler at hand into a
 * temporary directory. It is the same generator for every server measured.
 *
 *   native_load udp|tcp -h HOST -p PORT -r REQUESTS [-d SECONDS] [-w WARMUP]
 *                       [-c IN_FLIGHT] [-s SOURCES] [-R RATE] [-t TIMEOUT_MS]
 *   native_load echo-udp|echo-tcp -h HOST -p PORT      (a trivial server: the ceiling)
 *
 * REQUESTS is a file of encoded requests, each an envelope (handle-protocol.md §3) and
 * its message, back to back; they are sent in turn, round and round. The request id
 * (envelope bytes 8..12) is overwritten with the generator's own, which the server echoes.
 *
 * udp: one socket, bound to every loopback address (0.0.0.0), sends each request from one
 *   of SOURCES source addresses in 127.1.0.0/16 in turn (IP_PKTINFO), so a server that
 *   budgets what it sends to one address sees SOURCES clients; batches of datagrams go
 *   in and out with recvmmsg/sendmmsg. IN_FLIGHT requests wait for an answer at any time
 *   (a closed loop), or, with -R, requests are sent at RATE per second (an open loop,
 *   IN_FLIGHT at most) and a latency counts from when the request was due, so a
 *   server that falls behind is charged for the wait (no coordinated omission).
 * tcp: IN_FLIGHT connections at any time, each opened for one request and closed after
 *   its answer, as CNRI's client resolves over TCP (source addresses in turn, as for udp).
 *   The latency counts from the connect() to the last byte of the answer.
 *
 * A request not answered within TIMEOUT_MS is counted as a timeout and replaced.
 * Prints one JSON object: answers by response code (header bytes 4..8), timeouts, errors,
 * answers per second over the SECONDS after WARMUP, latency percentiles in microseconds,
 * and the generator's own CPU time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define ENVELOPE 20
#define UDP_PAYLOAD 492
#define BATCH 64
#define MAX_UNIT 4096
/* latency histogram: 1 us buckets below 100 ms, then 1 ms buckets up to 100 s */
#define FINE 100000
#define COARSE 100000

static uint64_t hist[FINE + COARSE + 1];
static uint64_t codes[1024]; /* answers by response code; 1023 collects the rest */
static uint64_t timeouts, errors, answered, stale, sent;
static double behind;
static int measuring;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void record(double seconds, const unsigned char *unit, size_t len) {
    if (!measuring) return;
    uint32_t rc = 1023;
    if (len >= ENVELOPE + 8) {
        rc = ((uint32_t)unit[24] << 24) | ((uint32_t)unit[25] << 16) | ((uint32_t)unit[26] << 8) | unit[27];
        if (rc > 1022) rc = 1023;
    }
    codes[rc]++;
    answered++;
    double us = seconds * 1e6;
    if (us < 0) us = 0;
    uint64_t b = (uint64_t)us;
    if (b >= FINE) {
        b = FINE + (b - FINE) / 1000;
        if (b > FINE + COARSE) b = FINE + COARSE;
    }
    hist[b]++;
}

static double percentile(double p) {
    uint64_t total = 0;
    for (size_t i = 0; i <= FINE + COARSE; i++) total += hist[i];
    if (total == 0) return -1;
    uint64_t want = (uint64_t)(p * (double)total);
    if (want >= total) want = total - 1;
    uint64_t seen = 0;
    for (size_t i = 0; i <= FINE + COARSE; i++) {
        seen += hist[i];
        if (seen > want) return i < FINE ? (double)i : (double)FINE + (double)(i - FINE) * 1000.0;
    }
    return -1;
}

static uint32_t be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* --- the requests ------------------------------------------------------------------ */

static unsigned char *reqdata;
static size_t *reqoff, *reqlen, nreq, nextreq;

static void load_requests(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die(path);
    struct stat st;
    if (fstat(fileno(f), &st) != 0) die(path);
    reqdata = malloc((size_t)st.st_size + 1);
    if (!reqdata || fread(reqdata, 1, (size_t)st.st_size, f) != (size_t)st.st_size) die(path);
    fclose(f);
    size_t cap = 1024;
    reqoff = malloc(cap * sizeof *reqoff);
    reqlen = malloc(cap * sizeof *reqlen);
    for (size_t at = 0; at + ENVELOPE <= (size_t)st.st_size;) {
        size_t len = ENVELOPE + be32(reqdata + at + 16);
        if (at + len > (size_t)st.st_size || len > ENVELOPE + UDP_PAYLOAD) {
            fprintf(stderr, "native_load: request at byte %zu is cut or longer than one datagram\n", at);
            exit(2);
        }
        if (nreq == cap) {
            cap *= 2;
            reqoff = realloc(reqoff, cap * sizeof *reqoff);
            reqlen = realloc(reqlen, cap * sizeof *reqlen);
        }
        reqoff[nreq] = at;
        reqlen[nreq++] = len;
        at += len;
    }
    if (nreq == 0) {
        fprintf(stderr, "native_load: no requests in %s\n", path);
        exit(2);
    }
}

/* The next request, with request id *id, copied into out; its length. */
static size_t next_request(unsigned char *out, uint32_t id) {
    size_t i = nextreq++;
    if (nextreq == nreq) nextreq = 0;
    memcpy(out, reqdata + reqoff[i], reqlen[i]);
    put_be32(out + 8, id);
    return reqlen[i];
}

static struct in_addr source_address(unsigned k) {
    struct in_addr a;
    a.s_addr = htonl((127u << 24) | (1u << 16) | ((k / 250u) << 8) | (1u + k % 250u));
    return a;
}

/* --- UDP ------------------------------------------------------------------------- */

struct slot {
    uint32_t id;     /* the id of the request out, 0 when free */
    double sent;     /* when it was sent (or due, in an open loop) */
    uint32_t parts;  /* packets of the answer received */
};

static int run_udp(struct sockaddr_in *server, double seconds, double warmup, unsigned window,
                   unsigned sources, double rate, double timeout) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (fd < 0) die("socket");
    int big = 8 << 20, one = 1;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
    struct sockaddr_in any = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (bind(fd, (struct sockaddr *)&any, sizeof any) != 0) die("bind");

    struct slot *slots = calloc(window, sizeof *slots);
    uint32_t *freelist = malloc(window * sizeof *freelist);
    unsigned nfree = window;
    for (unsigned i = 0; i < window; i++) freelist[i] = window - 1 - i;
    uint32_t generation = 1;
    unsigned source = 0;

    static unsigned char outbuf[BATCH][ENVELOPE + UDP_PAYLOAD];
    static char outctl[BATCH][CMSG_SPACE(sizeof(struct in_pktinfo))];
    static struct iovec outiov[BATCH];
    static struct mmsghdr outmsg[BATCH];
    static unsigned char inbuf[BATCH][2048];
    static struct iovec iniov[BATCH];
    static struct mmsghdr inmsg[BATCH];
    for (int i = 0; i < BATCH; i++) {
        iniov[i].iov_base = inbuf[i];
        iniov[i].iov_len = sizeof inbuf[i];
        inmsg[i].msg_hdr.msg_iov = &iniov[i];
        inmsg[i].msg_hdr.msg_iovlen = 1;
    }

    double start = now_s(), begin = start + warmup, end = begin + seconds;
    double next_check = start, due = start;
    uint64_t sent_total = 0;
    for (;;) {
        double t = now_s();
        if (t >= end) break;
        if (!measuring && t >= begin) measuring = 1;

        /* send: fill free slots (closed loop), or what is due (open loop) */
        int n = 0;
        while (nfree > 0 && n < BATCH) {
            double when = t;
            if (rate > 0) {
                if (due > t) break;
                when = due;
                due += 1.0 / rate;
            }
            uint32_t s = freelist[--nfree];
            uint32_t id = generation * window + s;
            if (++generation >= 0x7fffffffu / window) generation = 1;
            slots[s].id = id;
            slots[s].sent = when;
            slots[s].parts = 0;
            size_t len = next_request(outbuf[n], id);
            outiov[n].iov_base = outbuf[n];
            outiov[n].iov_len = len;
            struct msghdr *h = &outmsg[n].msg_hdr;
            memset(h, 0, sizeof *h);
            h->msg_name = server;
            h->msg_namelen = sizeof *server;
            h->msg_iov = &outiov[n];
            h->msg_iovlen = 1;
            h->msg_control = outctl[n];
            h->msg_controllen = sizeof outctl[n];
            struct cmsghdr *c = CMSG_FIRSTHDR(h);
            c->cmsg_level = IPPROTO_IP;
            c->cmsg_type = IP_PKTINFO;
            c->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
            struct in_pktinfo info = {0};
            info.ipi_spec_dst = source_address(source);
            if (++source >= sources) source = 0;
            memcpy(CMSG_DATA(c), &info, sizeof info);
            n++;
        }
        for (int done = 0; done < n;) {
            int k = sendmmsg(fd, outmsg + done, (unsigned)(n - done), 0);
            if (k < 0) {
                if (errno == EAGAIN || errno == EINTR) continue;
                errors++;
                break;
            }
            done += k;
        }
        if (measuring) sent_total += (uint64_t)n;

        /* receive what has come */
        int k = recvmmsg(fd, inmsg, BATCH, MSG_DONTWAIT, NULL);
        if (k < 0 && errno != EAGAIN && errno != EINTR) die("recvmmsg");
        double got = now_s();
        for (int i = 0; i < k; i++) {
            size_t len = inmsg[i].msg_len;
            if (len < ENVELOPE) continue;
            uint32_t id = be32(inbuf[i] + 8);
            uint32_t s = id % window;
            if (s >= window || slots[s].id != id) {
                stale++;
                continue;
            }
            uint32_t total = be32(inbuf[i] + 16);
            uint32_t count = total == 0 ? 1 : (total + UDP_PAYLOAD - 1) / UDP_PAYLOAD;
            if (be32(inbuf[i] + 12) == 0) {
                record(got - slots[s].sent, inbuf[i], len);
            }
            if (++slots[s].parts < count) continue;
            slots[s].id = 0;
            freelist[nfree++] = s;
        }

        if (got >= next_check) { /* time out the requests not answered */
            next_check = got + 0.01;
            for (unsigned s = 0; s < window; s++) {
                if (slots[s].id != 0 && got - slots[s].sent > timeout) {
                    if (measuring) timeouts++;
                    slots[s].id = 0;
                    freelist[nfree++] = s;
                }
            }
        }
        if (k <= 0 && (nfree == 0 || rate > 0)) {
            /* nothing came and nothing to send: wait for the socket, briefly */
            struct timespec pause = {0, rate > 0 ? 20000 : 0};
            if (rate > 0) {
                nanosleep(&pause, NULL);
            } else {
                fd_set r;
                FD_ZERO(&r);
                FD_SET(fd, &r);
                struct timeval tv = {0, 10000};
                select(fd + 1, &r, NULL, NULL, &tv);
            }
        }
    }
    if (rate > 0 && due < end) behind = end - due; /* how far the sends fell behind */
    sent = sent_total;
    return 0;
}

/* --- TCP ------------------------------------------------------------------------- */

struct conn {
    int fd;
    double started;
    size_t out_len, out_at, in_at, got; /* got: bytes of the answer read, in_at: kept */
    unsigned char out[ENVELOPE + UDP_PAYLOAD];
    unsigned char in[MAX_UNIT];
};

static int open_conn(int ep, struct conn *c, struct sockaddr_in *server, unsigned *source,
                     unsigned sources, uint32_t id, uint32_t index) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) die("socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr = source_address(*source)};
    if (++*source >= sources) *source = 0;
    if (sources > 0 && bind(c->fd, (struct sockaddr *)&from, sizeof from) != 0) die("bind");
    c->started = now_s();
    c->out_len = next_request(c->out, id);
    c->out_at = c->in_at = c->got = 0;
    if (connect(c->fd, (struct sockaddr *)server, sizeof *server) != 0 && errno != EINPROGRESS) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    if (measuring) sent++;
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = index};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl");
    return 0;
}

static void close_conn(struct conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

static int run_tcp(struct sockaddr_in *server, double seconds, double warmup, unsigned conns,
                   unsigned sources, double timeout) {
    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct conn *cs = calloc(conns, sizeof *cs);
    unsigned source = 0;
    uint32_t id = 1;
    for (unsigned i = 0; i < conns; i++) {
        cs[i].fd = -1;
        while (open_conn(ep, &cs[i], server, &source, sources, id++, i) != 0) {
            if (measuring) errors++;
        }
    }
    struct epoll_event evs[256];
    double start = now_s(), begin = start + warmup, end = begin + seconds, next_check = start;
    for (;;) {
        double t = now_s();
        if (t >= end) break;
        if (!measuring && t >= begin) measuring = 1;
        int n = epoll_wait(ep, evs, 256, 10);
        if (n < 0 && errno != EINTR) die("epoll_wait");
        for (int i = 0; i < n; i++) {
            unsigned ix = evs[i].data.u32;
            struct conn *c = &cs[ix];
            if (c->fd < 0) continue;
            int finished = 0, failed = 0;
            if (evs[i].events & (EPOLLERR)) failed = 1;
            if (!failed && (evs[i].events & EPOLLOUT) && c->out_at < c->out_len) {
                ssize_t w = write(c->fd, c->out + c->out_at, c->out_len - c->out_at);
                if (w < 0 && errno != EAGAIN) failed = 1;
                if (w > 0) c->out_at += (size_t)w;
                if (c->out_at == c->out_len) {
                    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = ix};
                    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                }
            }
            if (!failed && (evs[i].events & (EPOLLIN | EPOLLHUP))) {
                for (;;) {
                    ssize_t r = read(c->fd, c->in + c->in_at, sizeof c->in - c->in_at);
                    if (r < 0) {
                        if (errno != EAGAIN) failed = 1;
                        break;
                    }
                    if (r == 0) { /* closed before the whole answer */
                        failed = 1;
                        break;
                    }
                    c->in_at += (size_t)r;
                    c->got += (size_t)r;
                    if (c->got >= ENVELOPE && c->got >= ENVELOPE + be32(c->in + 16)) {
                        finished = 1;
                        break;
                    }
                    if (c->in_at == sizeof c->in) c->in_at = ENVELOPE + 8; /* keep the head only */
                }
            }
            if (finished) record(now_s() - c->started, c->in, c->in_at);
            if (finished || failed) {
                if (failed && measuring) errors++;
                close_conn(c);
                while (open_conn(ep, c, server, &source, sources, id++, ix) != 0) {
                    if (measuring) errors++;
                }
            }
        }
        double got = now_s();
        if (got >= next_check) {
            next_check = got + 0.01;
            for (unsigned i = 0; i < conns; i++) {
                if (cs[i].fd >= 0 && got - cs[i].started > timeout) {
                    if (measuring) timeouts++;
                    close_conn(&cs[i]);
                    while (open_conn(ep, &cs[i], server, &source, sources, id++, i) != 0) {
                        if (measuring) errors++;
                    }
                }
            }
        }
    }
    return 0;
}

/* --- the trivial servers: the generator's ceiling --------------------------------- */

static void answer_in_place(unsigned char *unit, size_t len) {
    if (len >= ENVELOPE + 8) put_be32(unit + 24, 1); /* response code 1, SUCCESS */
}

_Noreturn static void echo_udp(struct sockaddr_in *addr) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) die("socket");
    int big = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (bind(fd, (struct sockaddr *)addr, sizeof *addr) != 0) die("bind");
    static unsigned char buf[BATCH][2048];
    static struct iovec iov[BATCH];
    static struct sockaddr_in from[BATCH];
    static struct mmsghdr msg[BATCH];
    for (;;) {
        for (int i = 0; i < BATCH; i++) {
            iov[i].iov_base = buf[i];
            iov[i].iov_len = sizeof buf[i];
            memset(&msg[i].msg_hdr, 0, sizeof msg[i].msg_hdr);
            msg[i].msg_hdr.msg_name = &from[i];
            msg[i].msg_hdr.msg_namelen = sizeof from[i];
            msg[i].msg_hdr.msg_iov = &iov[i];
            msg[i].msg_hdr.msg_iovlen = 1;
        }
        int k = recvmmsg(fd, msg, BATCH, MSG_WAITFORONE, NULL);
        if (k < 0) {
            if (errno == EINTR) continue;
            die("recvmmsg");
        }
        for (int i = 0; i < k; i++) {
            answer_in_place(buf[i], msg[i].msg_len);
            iov[i].iov_len = msg[i].msg_len;
        }
        for (int done = 0; done < k;) {
            int s = sendmmsg(fd, msg + done, (unsigned)(k - done), 0);
            if (s < 0) break;
            done += s;
        }
    }
}

_Noreturn static void echo_tcp(struct sockaddr_in *addr) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, (struct sockaddr *)addr, sizeof *addr) != 0) die("bind");
    if (listen(lfd, 4096) != 0) die("listen");
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    static unsigned char buf[65536];
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) {
                int c;
                while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event e = {.events = EPOLLIN, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
                }
                continue;
            }
            /* a request fits one read on loopback; answer it and close, as a server does */
            ssize_t r = read(fd, buf, sizeof buf);
            if (r > 0) {
                answer_in_place(buf, (size_t)r);
                ssize_t w = write(fd, buf, (size_t)r);
                (void)w;
            }
            if (r == 0 || r > 0 || errno != EAGAIN) close(fd);
        }
    }
}

/* --- main -------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: see the top of native_load.c\n");
        return 2;
    }
    const char *mode = argv[1], *host = "127.0.0.1", *requests = NULL;
    int port = 0;
    double seconds = 10, warmup = 2, rate = 0, timeout_ms = 1000;
    unsigned in_flight = 128, sources = 1024;
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *v = argv[i + 1];
        if (!strcmp(flag, "-h")) host = v;
        else if (!strcmp(flag, "-p")) port = atoi(v);
        else if (!strcmp(flag, "-r")) requests = v;
        else if (!strcmp(flag, "-d")) seconds = atof(v);
        else if (!strcmp(flag, "-w")) warmup = atof(v);
        else if (!strcmp(flag, "-c")) in_flight = (unsigned)atoi(v);
        else if (!strcmp(flag, "-s")) sources = (unsigned)atoi(v);
        else if (!strcmp(flag, "-R")) rate = atof(v);
        else if (!strcmp(flag, "-t")) timeout_ms = atof(v);
        else {
            fprintf(stderr, "native_load: unknown option %s\n", flag);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "native_load: %s is no IPv4 address\n", host);
        return 2;
    }
    if (!strcmp(mode, "echo-udp")) echo_udp(&addr);
    if (!strcmp(mode, "echo-tcp")) echo_tcp(&addr);
    if (!requests) {
        fprintf(stderr, "native_load: -r REQUESTS is needed\n");
        return 2;
    }
    if (in_flight == 0 || sources == 0 || sources > 250 * 256) {
        fprintf(stderr, "native_load: -c must be at least 1, -s 1 to 64000\n");
        return 2;
    }
    load_requests(requests);
    if (!strcmp(mode, "udp")) run_udp(&addr, seconds, warmup, in_flight, sources, rate, timeout_ms / 1000);
    else if (!strcmp(mode, "tcp")) run_tcp(&addr, seconds, warmup, in_flight, sources, timeout_ms / 1000);
    else {
        fprintf(stderr, "native_load: unknown mode %s\n", mode);
        return 2;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"mode\":\"%s\",\"seconds\":%.3f,\"answered\":%llu,\"per_second\":%.1f,", mode, seconds,
           (unsigned long long)answered, (double)answered / seconds);
    printf("\"codes\":{");
    int first = 1;
    for (int i = 0; i < 1024; i++) {
        if (codes[i]) {
            printf("%s\"%d\":%llu", first ? "" : ",", i, (unsigned long long)codes[i]);
            first = 0;
        }
    }
    printf("},\"timeouts\":%llu,\"errors\":%llu,\"stale\":%llu,\"sent\":%llu,\"behind_s\":%.3f,",
           (unsigned long long)timeouts, (unsigned long long)errors, (unsigned long long)stale,
           (unsigned long long)sent, behind);
    printf("\"p50_us\":%.0f,\"p90_us\":%.0f,\"p99_us\":%.0f,\"p999_us\":%.0f,\"max_us\":%.0f,", percentile(0.50),
           percentile(0.90), percentile(0.99), percentile(0.999), percentile(1.0));
    printf("\"cpu_s\":%.3f}\n", (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6);
    return 0;
}
