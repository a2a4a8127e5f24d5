// Command server is the showdown contract (workloads/README.md) on Gin:
// the string, bank, users and sku workloads in one process, with pgx/v5
// for PostgreSQL, go-sql-driver/mysql for MariaDB and client_golang for
// metrics.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Shutdown timing. The contract allows 10 s from SIGTERM to exit, pools
// included: drainWindow + shutdownGrace + poolCloseWait stays under it.
const (
	// drainWindow is how long, after SIGTERM, the server keeps serving the
	// connections it has (answering with "Connection: close") before
	// http.Server.Shutdown closes the idle ones. Shutdown alone closes a
	// keep-alive connection as idle even when a request already sits unread
	// in its socket buffer (its goroutine not yet scheduled), and the client
	// gets a reset for a request it sent well before the signal.
	drainWindow = 500 * time.Millisecond
	// shutdownGrace is how long requests in flight then get to finish.
	shutdownGrace = 7500 * time.Millisecond
)

// errorLog reports what is not a request log: start, stop and bugs. It
// writes to stderr so stdout holds request logs only.
var errorLog = slog.New(slog.NewJSONHandler(os.Stderr, nil))

func main() {
	gin.SetMode(gin.ReleaseMode)
	if err := run(os.Getenv); err != nil {
		errorLog.Error("go-gin: " + err.Error())
		os.Exit(1)
	}
}

// config is the environment the service reads (workloads/README.md plus
// the knobs in showdown.yaml).
type config struct {
	host, port  string
	databaseURL string
	mysqlURL    string
	poolSize    int
	logRequests bool
	limits      dbLimits
}

// loadConfig reads and checks the environment, reporting every mistake at once.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		host:        orDefault(getenv("HOST"), "127.0.0.1"),
		port:        orDefault(getenv("PORT"), "8080"),
		databaseURL: getenv("DATABASE_URL"),
		mysqlURL:    getenv("MYSQL_URL"),
	}
	var errs []error
	if p, err := strconv.Atoi(c.port); err != nil || p < 0 || p > 65535 {
		errs = append(errs, fmt.Errorf("PORT=%q: want a TCP port, 0 .. 65535", c.port))
	}
	pool := orDefault(getenv("DB_POOL_SIZE"), "20")
	if n, err := strconv.Atoi(pool); err != nil || n < 1 || n > 10000 {
		errs = append(errs, fmt.Errorf("DB_POOL_SIZE=%q: want a number of connections, 1 .. 10000", pool))
	} else {
		c.poolSize = n
	}
	logs := orDefault(getenv("LOG_REQUESTS"), "false")
	if b, err := strconv.ParseBool(logs); err != nil {
		errs = append(errs, fmt.Errorf("LOG_REQUESTS=%q: want true or false", logs))
	} else {
		c.logRequests = b
	}
	duration := func(name, def string) time.Duration {
		v := orDefault(getenv(name), def)
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive duration such as %s", name, v, def))
		}
		return d
	}
	c.limits.acquire = duration("DB_ACQUIRE_TIMEOUT", "2s")
	c.limits.query = duration("DB_QUERY_TIMEOUT", "30s")
	return c, errors.Join(errs...)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// run serves until SIGTERM or SIGINT, then drains and returns nil.
func run(getenv func(string) string) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	pg, err := openPostgres(cfg.databaseURL, cfg.poolSize, cfg.limits)
	if err != nil {
		return err
	}
	my, err := openMySQL(cfg.mysqlURL, cfg.poolSize, cfg.limits)
	if err != nil {
		if pg != nil {
			pg.close()
		}
		return err
	}
	defer closePools(pg, my)

	var requestLog *slog.Logger
	if cfg.logRequests {
		requestLog = slog.New(slog.NewJSONHandler(os.Stdout, nil))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var draining atomic.Bool // set at SIGTERM
	handler := newHandler(pg, my, reg, requestLog, &draining)

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.host, cfg.port))
	if err != nil {
		return fmt.Errorf("%w (check HOST=%s and PORT=%s: is another process on that port?)", err, cfg.host, cfg.port)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(errorLog.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	errorLog.Info("listening", "addr", ln.Addr().String(),
		"postgres", pg != nil, "mysql", my != nil, "pool_size", cfg.poolSize)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting; ask every client still connected to close after its
	// next answer; then let the requests in flight finish. The deferred
	// closePools closes the pools.
	stop()
	draining.Store(true)
	_ = ln.Close()
	time.Sleep(drainWindow)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		errorLog.Warn("shutdown: requests still running after the grace period", "error", err.Error())
		_ = srv.Close()
	}
	errorLog.Info("stopped")
	return nil
}

// newHandler routes every workload, /health and /metrics on a Gin engine
// in release mode, with the metrics, error and (when requestLog is not
// nil) request log middleware. A nil pool makes its workloads answer 503
// "database not configured". Once draining is set, every answer asks the
// client to close the connection.
func newHandler(pg *postgres, my *mysqlDB, reg *prometheus.Registry, requestLog *slog.Logger, draining *atomic.Bool) http.Handler {
	r := gin.New() // no Logger, no Recovery: ours below
	// The contract's routing: /health/ and /HEALTH are 404, not redirects;
	// a known path with another method is 405 with Allow. The escaped path
	// is routed, so /client/%2e%2e/balance reaches the handler (400).
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.UseEscapedPath = true
	r.UnescapePathValues = true
	labels := routeLabels{}
	r.Use(observe(newMetrics(reg), labels, draining))
	if requestLog != nil {
		r.Use(logRequests(requestLog))
	}
	r.Use(recoverJSON, answerErrors)
	r.NoRoute(noRoute)
	r.NoMethod(noMethod)

	registerString(r)
	newBank(pg, reg).register(r)
	users{pg}.register(r)
	newSKU(my).register(r)
	r.GET("/health", handle(health(pg, my)))
	r.GET("/metrics", gin.WrapH(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	for _, route := range r.Routes() {
		labels[route.Path] = contractPattern(route.Path)
	}
	return r
}

// poolCloseWait bounds closing the pools at exit: pgxpool.Close waits for
// every borrowed connection, and after a timed-out Shutdown a handler may
// still hold one.
const poolCloseWait = time.Second

// closePools closes the pools that exist, waiting at most poolCloseWait.
func closePools(pg *postgres, my *mysqlDB) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if pg != nil {
			pg.close()
		}
		if my != nil {
			my.close()
		}
	}()
	select {
	case <-done:
	case <-time.After(poolCloseWait):
		errorLog.Warn("exit with database connections still borrowed")
	}
}

// pingTimeout bounds each database ping of /health.
const pingTimeout = time.Second

// healthBody is the answer of a healthy /health.
type healthBody struct {
	Status string `json:"status"`
}

// health answers 200 when every configured database answers a ping within
// a second; an unset database is not checked.
func health(pg *postgres, my *mysqlDB) apiHandler {
	return func(c *gin.Context) error {
		if pg != nil {
			if err := pg.ping(c.Request.Context(), pingTimeout); err != nil {
				errorLog.Warn("health: postgres ping failed", "error", err.Error())
				return &apiError{http.StatusServiceUnavailable, "postgres unavailable"} // the driver's text only in the log
			}
		}
		if my != nil {
			if err := my.ping(c.Request.Context(), pingTimeout); err != nil {
				errorLog.Warn("health: mysql ping failed", "error", err.Error())
				return &apiError{http.StatusServiceUnavailable, "mysql unavailable"} // the driver's text only in the log
			}
		}
		c.JSON(http.StatusOK, healthBody{"ok"})
		return nil
	}
}
