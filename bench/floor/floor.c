/*
 * floor: the least CPU a load generator can spend per request on this
 * machine: what loopback TCP alone costs. Closed model, C connections
 * (50), each a keep-alive HTTP/1.1 connection that writes one fixed GET
 * and reads its response, epoll (level-triggered), one write and one read
 * per request; nothing is parsed but the header's end and Content-Length
 * (a response must have one). It prints the requests per second and the
 * CPU (user + system, getrusage) per request: the floor the generators in
 * bench/README.md are compared with.
 *
 *   cc -O2 -o floor bench/floor/floor.c
 *   taskset -c 1 ./floor -c 50 -d 10 http://127.0.0.1:8080/
 *   taskset -c 1 ./floor -b '{"s":"hello"}' http://127.0.0.1:8080/uppercase
 *
 * -b sends a POST with that JSON body instead of a GET (the string
 * workload's request).
 * It runs -d seconds (default 10, at most 3600) and then exits; a
 * connection the server closes is counted and not replaced.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXCONN 4096
#define BUFSZ 65536

struct conn {
	int fd;
	size_t have; /* bytes of the current response's header kept in buf */
	long got;    /* bytes of the current response received so far */
	long want;   /* its total length, -1 until the header is complete */
	char buf[BUFSZ];
};

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* response_length returns the whole response's length once its header
 * is in b[0:n], or -1; -2 when the header has no Content-Length. */
static long response_length(const char *b, size_t n) {
	const char *end = memmem(b, n, "\r\n\r\n", 4);
	if (!end)
		return -1;
	size_t hlen = end - b + 4;
	for (const char *p = b; p < end;) {
		const char *eol = memmem(p, end - p, "\r\n", 2);
		if (!eol)
			eol = end;
		if (eol - p > 15 && strncasecmp(p, "Content-Length:", 15) == 0)
			return (long)hlen + strtol(p + 15, NULL, 10);
		p = eol + 2;
	}
	return -2;
}

static void usage(void) {
	fprintf(stderr, "usage: floor [-c connections] [-d seconds] [-b json-body] http://HOST:PORT/PATH\n");
	exit(2);
}

int main(int argc, char **argv) {
	int nconn = 50, secs = 10, opt;
	const char *body = NULL;
	while ((opt = getopt(argc, argv, "c:d:b:")) != -1) {
		switch (opt) {
		case 'c': nconn = atoi(optarg); break;
		case 'd': secs = atoi(optarg); break;
		case 'b': body = optarg; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || nconn < 1 || nconn > MAXCONN || secs < 1 || secs > 3600)
		usage();
	const char *url = argv[optind];
	if (strncmp(url, "http://", 7) != 0)
		usage();
	char host[256];
	const char *h = url + 7, *slash = strchr(h, '/'), *path = slash ? slash : "/";
	size_t hl = slash ? (size_t)(slash - h) : strlen(h);
	if (hl == 0 || hl >= sizeof host)
		usage();
	memcpy(host, h, hl);
	host[hl] = 0;
	char *colon = strrchr(host, ':');
	int port = 80;
	if (colon) {
		*colon = 0;
		port = atoi(colon + 1);
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "floor: %s: want an IPv4 address\n", host);
		return 2;
	}
	char req[1024];
	int reqlen;
	if (body)
		reqlen = snprintf(req, sizeof req,
		                  "POST %s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: floor\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		                  path, (int)hl, h, strlen(body), body);
	else
		reqlen = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: floor\r\n\r\n", path, (int)hl, h);
	if (reqlen <= 0 || reqlen >= (int)sizeof req)
		usage();

	int ep = epoll_create1(0);
	struct conn *cs = calloc(nconn, sizeof *cs);
	for (int i = 0; i < nconn; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
			perror("floor: connect");
			return 1;
		}
		cs[i].fd = fd;
		cs[i].want = -1;
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cs[i]};
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	long done = 0, closed = 0, bad = 0;
	double t0 = now(), c0 = cpu(), end = t0 + secs;
	for (int i = 0; i < nconn; i++)
		if (write(cs[i].fd, req, reqlen) != reqlen) {
			perror("floor: write");
			return 1;
		}
	struct epoll_event evs[256];
	int live = nconn;
	while (live > 0) {
		double left = end - now();
		if (left <= 0)
			break;
		int n = epoll_wait(ep, evs, 256, (int)(left * 1000) + 1);
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			/* Only the header is kept; a body is counted, not kept. */
			size_t at = c->want == -1 ? c->have : 0;
			if (at == BUFSZ) {
				bad++; /* a header over 64 KiB */
				live--;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				continue;
			}
			ssize_t r = read(c->fd, c->buf + at, BUFSZ - at);
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				closed++;
				live--;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				continue;
			}
			c->got += r;
			if (c->want == -1) {
				c->have += r;
				c->want = response_length(c->buf, c->have);
				if (c->want == -2) {
					bad++;
					live--;
					epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
					close(c->fd);
					continue;
				}
			}
			if (c->want < 0 || c->got < c->want)
				continue; /* the rest comes with a later read */
			done++;
			c->have = 0;
			c->got = 0;
			c->want = -1;
			if (write(c->fd, req, reqlen) != reqlen) {
				closed++;
				live--;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
			}
		}
	}
	double el = now() - t0, used = cpu() - c0;
	printf("requests %ld in %.2f s: %.0f req/s, CPU %.3f s (%.0f%%), %.2f us per request",
	       done, el, done / el, used, 100 * used / el, done ? used / done * 1e6 : 0);
	if (closed || bad)
		printf("; %ld connections closed, %ld responses without Content-Length (or a header over 64 KiB)", closed, bad);
	printf("\n");
	return 0;
}
