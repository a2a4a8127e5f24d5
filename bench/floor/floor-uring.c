/*
 * floor-uring: the floor client (floor.c) on io_uring instead of epoll,
 * to measure what batching a generator's system calls could save on this
 * machine before any engine is written on it. Same closed model, same
 * request, same parsing (the header's end and Content-Length only); each
 * connection keeps one recv in flight; a complete response queues the
 * next request's send (its success posts no completion) and another recv,
 * and one io_uring_enter submits everything queued and waits for the next
 * completion. The ring is set up with SINGLE_ISSUER and DEFER_TASKRUN, so
 * the kernel's completion work runs in that one call, in a batch.
 * Raw system calls: no liburing.
 *
 *   cc -O2 -o floor-uring bench/floor/floor-uring.c
 *   taskset -c 1 ./floor-uring -c 50 -d 10 http://127.0.0.1:8080/
 *
 * Options and output as floor.c's; it also prints the io_uring_enter
 * calls per request.
 */
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "floor.h"

#define RING 8192

/* The ring's shared state. */
static int ring_fd;
static unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
static struct io_uring_sqe *sqes;
static struct io_uring_cqe *cqes;
static unsigned queued; /* SQEs written since the last enter */

static struct io_uring_sqe *sqe(void) {
	unsigned tail = *sq_tail, head = atomic_load_explicit((_Atomic unsigned *)sq_head, memory_order_acquire);
	if (tail - head >= RING) {
		fprintf(stderr, "floor-uring: submission ring full\n");
		exit(1);
	}
	struct io_uring_sqe *s = &sqes[tail & *sq_mask];
	memset(s, 0, sizeof *s);
	sq_array[tail & *sq_mask] = tail & *sq_mask;
	atomic_store_explicit((_Atomic unsigned *)sq_tail, tail + 1, memory_order_release);
	queued++;
	return s;
}

static void queue_recv(struct conn *c, uint64_t idx) {
	size_t at = c->want == -1 ? c->have : 0;
	struct io_uring_sqe *s = sqe();
	s->opcode = IORING_OP_RECV;
	s->fd = c->fd;
	s->addr = (uint64_t)(uintptr_t)(c->buf + at);
	s->len = BUFSZ - at;
	s->user_data = idx;
}

static const char *req;
static int reqlen;

static void queue_send(struct conn *c) {
	struct io_uring_sqe *s = sqe();
	s->opcode = IORING_OP_SEND;
	s->fd = c->fd;
	s->addr = (uint64_t)(uintptr_t)req;
	s->len = reqlen;
	s->flags = IOSQE_CQE_SKIP_SUCCESS;
	s->user_data = UINT64_MAX; /* a failed send's completion */
}

int main(int argc, char **argv) {
	struct options o;
	parse_options(argc, argv, "floor-uring", &o);
	int nconn = o.nconn, secs = o.secs;
	struct sockaddr_in sa = o.sa;
	req = o.req;
	reqlen = o.reqlen;

	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	ring_fd = syscall(__NR_io_uring_setup, RING, &p);
	if (ring_fd < 0) {
		perror("floor-uring: io_uring_setup");
		return 1;
	}
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		fprintf(stderr, "floor-uring: the kernel lacks IORING_FEAT_SINGLE_MMAP\n");
		return 1;
	}
	size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	size_t rsz = sqsz > cqsz ? sqsz : cqsz;
	char *rp = mmap(0, rsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQ_RING);
	sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd, IORING_OFF_SQES);
	if (rp == MAP_FAILED || sqes == MAP_FAILED) {
		perror("floor-uring: mmap");
		return 1;
	}
	sq_head = (unsigned *)(rp + p.sq_off.head);
	sq_tail = (unsigned *)(rp + p.sq_off.tail);
	sq_mask = (unsigned *)(rp + p.sq_off.ring_mask);
	sq_array = (unsigned *)(rp + p.sq_off.array);
	cq_head = (unsigned *)(rp + p.cq_off.head);
	cq_tail = (unsigned *)(rp + p.cq_off.tail);
	cq_mask = (unsigned *)(rp + p.cq_off.ring_mask);
	cqes = (struct io_uring_cqe *)(rp + p.cq_off.cqes);

	struct conn *cs = connect_all(nconn, &sa, "floor-uring");
	long done = 0, closed = 0, bad = 0, enters = 0;
	double t0 = now(), c0 = cpu(), end = t0 + secs;
	for (int i = 0; i < nconn; i++) {
		queue_send(&cs[i]);
		queue_recv(&cs[i], i);
	}
	int live = nconn;
	while (live > 0 && now() < end) {
		/* Submit what is queued and wait for one completion, at most
		 * until the end (a timeout in the call itself would need
		 * IORING_ENTER_EXT_ARG; 50 ms past the end is enough here). */
		struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 50000000};
		struct io_uring_getevents_arg ga = {.ts = (uint64_t)(uintptr_t)&ts};
		int r = syscall(__NR_io_uring_enter, ring_fd, queued, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &ga, sizeof ga);
		enters++;
		if (r < 0 && errno != ETIME && errno != EINTR && errno != EBUSY) {
			perror("floor-uring: io_uring_enter");
			return 1;
		}
		/* What the kernel has not consumed stays queued. */
		queued = *sq_tail - atomic_load_explicit((_Atomic unsigned *)sq_head, memory_order_acquire);
		unsigned head = *cq_head, tail = atomic_load_explicit((_Atomic unsigned *)cq_tail, memory_order_acquire);
		for (; head != tail; head++) {
			struct io_uring_cqe *e = &cqes[head & *cq_mask];
			if (e->user_data == UINT64_MAX) {
				closed++; /* a send failed; its connection's recv ends it */
				continue;
			}
			struct conn *c = &cs[e->user_data];
			int n = e->res;
			if (n <= 0) {
				if (n == -EINTR || n == -EAGAIN) {
					queue_recv(c, e->user_data);
					continue;
				}
				closed++;
				live--;
				close(c->fd);
				continue;
			}
			int t = take(c, n);
			if (t < 0) {
				bad++;
				live--;
				close(c->fd);
				continue;
			}
			if (t == 0) {
				queue_recv(c, e->user_data);
				continue;
			}
			done++;
			queue_send(c);
			queue_recv(c, e->user_data);
		}
		atomic_store_explicit((_Atomic unsigned *)cq_head, head, memory_order_release);
	}
	double el = now() - t0, used = cpu() - c0;
	printf("requests %ld in %.2f s: %.0f req/s, CPU %.3f s (%.0f%%), %.2f us per request, %.2f io_uring_enter per request",
	       done, el, done / el, used, 100 * used / el, done ? used / done * 1e6 : 0, done ? (double)enters / done : 0);
	if (closed || bad)
		printf("; %ld connections closed, %ld responses without Content-Length (or a header over 64 KiB)", closed, bad);
	printf("\n");
	return 0;
}
