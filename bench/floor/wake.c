/*
 * wake: what one timed wake-up costs a process on this machine, with
 * nothing else done: the least CPU per request a precise open-model
 * pacer can spend at a rate where each send needs a wake of its own
 * (1,000/s: one request a millisecond). It sleeps -n times until the
 * next multiple of -p microseconds, each way below, and prints the CPU
 * (user + system, getrusage) per wake and how late the wakes were.
 *
 *   cc -O2 -o wake bench/floor/wake.c
 *   taskset -c 1 ./wake -p 1000 -n 3000
 *
 * Ways: clock_nanosleep (TIMER_ABSTIME), epoll_pwait2 with a timeout
 * (what showdown's loop does), and a timerfd in an epoll set (what its
 * precise pacer does). Each is run in turn, -n wakes (default 3000, at
 * most 1,000,000) of -p microseconds (default 1000, 10 to 1,000,000).
 * -s sets the process's timer slack in nanoseconds first (showdown's
 * precise pacer sets 1; the default is the system's, 50 us).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static long long ns(clockid_t c) {
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static double cpu(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static struct timespec ts(long long v) {
	struct timespec t = {.tv_sec = v / 1000000000LL, .tv_nsec = v % 1000000000LL};
	return t;
}

enum way { NANOSLEEP, EPOLL_PWAIT2, TIMERFD };
static const char *names[] = {"clock_nanosleep", "epoll_pwait2 timeout", "timerfd in epoll"};

/* one runs n wakes of period p ns the given way and prints a line. */
static void one(enum way w, int n, long long p) {
	int ep = epoll_create1(0), tfd = -1;
	if (ep < 0) {
		perror("wake: epoll_create1");
		exit(1);
	}
	if (w == TIMERFD) {
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = tfd};
		if (tfd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) < 0) {
			perror("wake: timerfd");
			exit(1);
		}
	}
	long long next = (ns(CLOCK_MONOTONIC) / p + 1) * p, late = 0, worst = 0;
	double c0 = cpu();
	for (int i = 0; i < n; i++, next += p) {
		struct epoll_event evs[1];
		long long left;
		switch (w) {
		case NANOSLEEP: {
			struct timespec t = ts(next);
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
				;
			break;
		}
		case EPOLL_PWAIT2:
			while ((left = next - ns(CLOCK_MONOTONIC)) > 0) {
				struct timespec t = ts(left);
				syscall(SYS_epoll_pwait2, ep, evs, 1, &t, NULL, 0);
			}
			break;
		case TIMERFD: {
			struct itimerspec it = {.it_value = ts(next)};
			timerfd_settime(tfd, TFD_TIMER_ABSTIME, &it, NULL);
			while (epoll_wait(ep, evs, 1, -1) < 0 && errno == EINTR)
				;
			unsigned long long x;
			if (read(tfd, &x, sizeof x) < 0 && errno != EAGAIN)
				perror("wake: read");
			break;
		}
		}
		long long l = ns(CLOCK_MONOTONIC) - next;
		late += l;
		if (l > worst)
			worst = l;
	}
	double used = cpu() - c0;
	printf("%-22s %d wakes of %lld us: CPU %.2f us per wake, late %.1f us on average, %.1f us at most\n",
	       names[w], n, p / 1000, used / n * 1e6, late / (double)n / 1e3, worst / 1e3);
	if (tfd >= 0)
		close(tfd);
	close(ep);
}

int main(int argc, char **argv) {
	int n = 3000, opt;
	long long p = 1000, slack = -1;
	while ((opt = getopt(argc, argv, "n:p:s:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'p': p = atoll(optarg); break;
		case 's': slack = atoll(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-p period-us] [-n wakes] [-s slack-ns]\n", argv[0]);
			return 2;
		}
	}
	if (slack > 0 && prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0) != 0) {
		perror("wake: PR_SET_TIMERSLACK");
		return 1;
	}
	if (n < 1 || n > 1000000 || p < 10 || p > 1000000) {
		fprintf(stderr, "wake: -n must be 1 to 1,000,000 and -p 10 to 1,000,000 microseconds\n");
		return 2;
	}
	for (enum way w = NANOSLEEP; w <= TIMERFD; w++)
		one(w, n, p * 1000);
	return 0;
}
