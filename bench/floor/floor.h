/*
 * floor.h: what the floor clients (floor.c on epoll, floor-uring.c on
 * io_uring) share: the connection, the clocks, the response's length,
 * and the command line (-c connections, -d seconds, -b JSON body, an
 * http://IPv4:PORT/PATH URL) turned into an address and the request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
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

/* take counts n bytes just received on c: 1 when they end its response
 * (c is then ready for the next), 0 when more are to come, -1 when the
 * response cannot be framed (no Content-Length, or a header that fills
 * the buffer). Only the header is kept in buf; a body is counted. */
static int take(struct conn *c, long n) {
	c->got += n;
	if (c->want == -1) {
		c->have += n;
		c->want = response_length(c->buf, c->have);
		if (c->want == -2 || (c->want == -1 && c->have == BUFSZ))
			return -1;
	}
	if (c->want < 0 || c->got < c->want)
		return 0;
	c->have = 0;
	c->got = 0;
	c->want = -1;
	return 1;
}

/* The command line, parsed. */
struct options {
	int nconn, secs;
	struct sockaddr_in sa;
	char req[1024];
	int reqlen;
};

static void usage(const char *name) {
	fprintf(stderr, "usage: %s [-c connections] [-d seconds] [-b json-body] http://HOST:PORT/PATH\n", name);
	exit(2);
}

/* parse_options reads the command line into o, or exits with the usage
 * (status 2). */
static void parse_options(int argc, char **argv, const char *name, struct options *o) {
	int opt;
	const char *body = NULL;
	o->nconn = 50;
	o->secs = 10;
	while ((opt = getopt(argc, argv, "c:d:b:")) != -1) {
		switch (opt) {
		case 'c': o->nconn = atoi(optarg); break;
		case 'd': o->secs = atoi(optarg); break;
		case 'b': body = optarg; break;
		default: usage(name);
		}
	}
	if (optind != argc - 1 || o->nconn < 1 || o->nconn > MAXCONN || o->secs < 1 || o->secs > 3600)
		usage(name);
	const char *url = argv[optind];
	if (strncmp(url, "http://", 7) != 0)
		usage(name);
	char host[256];
	const char *h = url + 7, *slash = strchr(h, '/'), *path = slash ? slash : "/";
	size_t hl = slash ? (size_t)(slash - h) : strlen(h);
	if (hl == 0 || hl >= sizeof host)
		usage(name);
	memcpy(host, h, hl);
	host[hl] = 0;
	char *colon = strrchr(host, ':');
	int port = 80;
	if (colon) {
		*colon = 0;
		port = atoi(colon + 1);
	}
	memset(&o->sa, 0, sizeof o->sa);
	o->sa.sin_family = AF_INET;
	o->sa.sin_port = htons(port);
	if (inet_pton(AF_INET, host, &o->sa.sin_addr) != 1) {
		fprintf(stderr, "%s: %s: want an IPv4 address\n", name, host);
		exit(2);
	}
	if (body)
		o->reqlen = snprintf(o->req, sizeof o->req,
		                     "POST %s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: floor\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		                     path, (int)hl, h, strlen(body), body);
	else
		o->reqlen = snprintf(o->req, sizeof o->req, "GET %s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: floor\r\n\r\n", path, (int)hl, h);
	if (o->reqlen <= 0 || o->reqlen >= (int)sizeof o->req)
		usage(name);
}

/* connect_all connects n keep-alive connections (TCP_NODELAY) to sa, or
 * exits (status 1); the connections' responses are still to come. */
static struct conn *connect_all(int n, const struct sockaddr_in *sa, const char *name) {
	struct conn *cs = calloc(n, sizeof *cs);
	if (!cs) {
		fprintf(stderr, "%s: out of memory\n", name);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
			fprintf(stderr, "%s: connect: %s\n", name, strerror(errno));
			exit(1);
		}
		cs[i].fd = fd;
		cs[i].want = -1;
	}
	return cs;
}
