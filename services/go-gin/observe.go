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

	"github.com/gin-gonic/gin"
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

// contractPattern writes gin's route pattern in the contract's form:
// "/client/:id/balance" -> "/client/{id}/balance".
func contractPattern(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// routeLabels maps gin's route patterns (c.FullPath) to the metrics'
// route labels; filled once the routes are registered, read-only after.
type routeLabels map[string]string

// label is the route label of a request: its pattern, or "unmatched".
func (l routeLabels) label(fullPath string) string {
	if v, ok := l[fullPath]; ok {
		return v
	}
	return "unmatched"
}

// observe counts and times every request (the routed ones and gin's 404
// and 405 answers alike) and answers a path with dot segments or doubled
// slashes with 404: gin's router would match /client/../balance to
// /client/:id/balance, and the contract wants 404 for a path that does not
// match a route. Once draining is set it answers with "Connection: close",
// so keep-alive clients leave before the server shuts down.
func observe(m *metrics, labels routeLabels, draining *atomic.Bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		if draining.Load() {
			c.Header("Connection", "close")
		}
		route := labels.label(c.FullPath())
		if !isCleanPath(c.Request.URL.EscapedPath()) {
			route = "unmatched"
			writeError(c, http.StatusNotFound, "no route for path "+c.Request.URL.Path)
			c.Abort()
		} else {
			c.Next()
		}
		m.requests.WithLabelValues(route, statusLabel(c.Writer.Status())).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	}
}

// logRequests writes one JSON line per request to logger, through
// log/slog: gin's own Logger writes text lines without a level.
func logRequests(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		elapsed := time.Since(start)
		logger.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("method", c.Request.Method),
			slog.String("path", c.Request.URL.Path),
			slog.Int("status", c.Writer.Status()),
			slog.Float64("duration_ms", float64(elapsed.Nanoseconds())/1e6),
		)
	}
}

// answerErrors answers the error a handler recorded with c.Error (see
// fail), as JSON with the status writeFailure maps it to.
func answerErrors(c *gin.Context) {
	c.Next()
	if len(c.Errors) > 0 && !c.Writer.Written() {
		writeFailure(c, c.Errors.Last().Err)
	}
}

// recoverJSON answers a panic (a bug) with a JSON 500 and logs it, as
// gin.Recovery would with a plain one. http.ErrAbortHandler is passed on:
// it asks net/http to close the connection without an answer (an in-doubt
// COMMIT that cannot be resolved), where gin.Recovery would swallow it and
// let gin write an empty 200.
func recoverJSON(c *gin.Context) {
	defer func() {
		rec := recover()
		if rec == nil {
			return
		}
		if rec == http.ErrAbortHandler {
			panic(rec)
		}
		errorLog.Error("panic", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", rec)
		if !c.Writer.Written() {
			writeError(c, http.StatusInternalServerError, "internal error (a bug in the service; see its log)")
		}
		c.Abort()
	}()
	c.Next()
}

// noRoute and noMethod answer gin's 404 and 405 in JSON; gin has set the
// Allow header of a 405 already.
func noRoute(c *gin.Context) {
	writeError(c, http.StatusNotFound, "no route for path "+c.Request.URL.Path)
}

func noMethod(c *gin.Context) {
	writeError(c, http.StatusMethodNotAllowed, "method "+c.Request.Method+" not allowed; allowed: "+c.Writer.Header().Get("Allow"))
}

// isCleanPath reports whether p has no "//", "/./" or "/../" (what a
// cleaning mux would redirect).
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
