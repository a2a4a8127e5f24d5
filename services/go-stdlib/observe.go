package main

import (
	"context"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics holds the two series the contract requires.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newMetrics registers the request counter and latency histogram with reg.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds",
			Help: "HTTP request latency by route pattern.",
			// Finer than DefBuckets at the low end: most answers here take
			// well under a millisecond.
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// statusLabels holds the status label of every code, so counting a request
// does not format one.
var statusLabels = func() (l [600]string) {
	for i := range l {
		l[i] = strconv.Itoa(i)
	}
	return l
}()

func statusLabel(code int) string {
	if code >= 0 && code < len(statusLabels) {
		return statusLabels[code]
	}
	return strconv.Itoa(code)
}

// routeLabel is the route of a mux pattern without its method
// ("GET /client/{id}/balance" -> "/client/{id}/balance"), or "unmatched".
func routeLabel(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		return pattern[i+1:]
	}
	return pattern
}

// observe wraps the mux: it counts and times every request, logs it when
// logger is not nil, and turns the mux's plain-text 404 and 405 answers
// into JSON ones. Once draining is set it answers with "Connection: close",
// so keep-alive clients leave before the server shuts down.
func observe(mux *http.ServeMux, m *metrics, logger *slog.Logger, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if draining.Load() {
			w.Header().Set("Connection", "close")
		}
		rw := &recorder{ResponseWriter: w, req: r}
		if !isCleanPath(r.URL.EscapedPath()) {
			// The mux would redirect /client/../balance to /balance; the
			// contract wants 404 for a path that does not match a route.
			writeError(rw, http.StatusNotFound, "no route for path "+r.URL.Path)
		} else {
			rw.fromMux = true
			mux.ServeHTTP(rw, r)
		}
		status := rw.status
		if status == 0 {
			status = http.StatusOK
		}
		elapsed := time.Since(start)
		route := routeLabel(r.Pattern) // set by the mux on r
		m.requests.WithLabelValues(route, statusLabel(status)).Inc()
		m.duration.WithLabelValues(route).Observe(elapsed.Seconds())
		if logger != nil {
			logger.LogAttrs(context.Background(), slog.LevelInfo, "request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Float64("duration_ms", float64(elapsed.Nanoseconds())/1e6),
			)
		}
	})
}

// isCleanPath reports whether the mux would serve p as it is rather than
// redirect to a cleaned form (no "//", "/./" or "/../").
func isCleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	clean := path.Clean(p) // does not allocate when p is already clean
	if p[len(p)-1] == '/' && clean != "/" {
		return clean+"/" == p
	}
	return clean == p
}

// recorder remembers the status for metrics and logs. For a request that
// matched no pattern (r.Pattern is empty once the mux has looked), the
// mux's handler answers 404 or 405 through http.Error in plain text: the
// recorder writes a JSON body instead and drops the text, keeping the
// Allow header the mux set.
type recorder struct {
	http.ResponseWriter
	req     *http.Request
	status  int
	fromMux bool // the mux has dispatched the request
	swallow bool // drop the mux's plain-text body
}

func (rw *recorder) WriteHeader(code int) {
	if rw.status != 0 {
		return
	}
	rw.status = code
	if rw.fromMux && rw.req.Pattern == "" {
		msg := "no route for path " + rw.req.URL.Path
		if code == http.StatusMethodNotAllowed {
			msg = "method " + rw.req.Method + " not allowed; allowed: " + rw.Header().Get("Allow")
		}
		h := rw.Header()
		h.Del("X-Content-Type-Options")
		rw.fromMux = false // writeJSON calls WriteHeader again on the real writer
		rw.status = 0
		writeError(rw, code, msg)
		rw.swallow = true
		return
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.swallow {
		return len(b), nil
	}
	if rw.status == 0 {
		rw.WriteHeader(http.StatusOK)
	}
	return rw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }
