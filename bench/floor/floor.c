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
#include <sys/epoll.h>

#include "floor.h"

int main(int argc, char **argv) {
	struct options o;
	parse_options(argc, argv, "floor", &o);
	int nconn = o.nconn, secs = o.secs, reqlen = o.reqlen;
	const char *req = o.req;
	struct sockaddr_in sa = o.sa;

	int ep = epoll_create1(0);
	struct conn *cs = connect_all(nconn, &sa, "floor");
	for (int i = 0; i < nconn; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cs[i]};
		epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
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
			int t = take(c, r);
			if (t < 0) {
				bad++;
				live--;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				continue;
			}
			if (t == 0)
				continue; /* the rest comes with a later read */
			done++;
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
