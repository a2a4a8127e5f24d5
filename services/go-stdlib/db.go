package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// showdown:shared begin db-limits

// connectTimeout bounds opening one database connection, so a database
// that is down costs a request at most this much before its 503.
const connectTimeout = time.Second

// dbLimits are the time bounds of database work.
type dbLimits struct {
	// acquire bounds the wait for a pooled connection, opening one
	// included: past it the request gets 503. This is what keeps "503
	// within 3 s" when the database is down or the pool is exhausted.
	acquire time.Duration
	// query bounds the statements of one request once it has a
	// connection: a safety net for a database that hangs, not a deadline
	// for slow queries (a full-table-scan plan must be slow, not failing).
	query time.Duration
}

// showdown:shared end db-limits

// postgres is the PostgreSQL pool with the time bounds of its requests.
type postgres struct {
	pool   *pgxpool.Pool
	limits dbLimits
	// mode is DB_POOL_MODE: poolShared, or one of the sources' mistakes
	// (poolPerRequest, poolNone), which open connections per request from
	// cfg instead of borrowing them from pool.
	mode string
	cfg  *pgxpool.Config
	// leaked counts the per-request pools left open after a database error.
	leaked atomic.Int64
}

// DB_POOL_MODE values. Only shared is right; the other two reproduce the
// mistakes of the source experiments and are never the default.
const (
	// poolShared: one pool per process, DB_POOL_SIZE connections.
	poolShared = "shared"
	// poolPerRequest: a new pool per request, closed after it, except
	// after a database error, when it is left open with its connection
	// (the 2018 Go bank opened a sql.DB per request and panicked on an
	// error before closing it).
	poolPerRequest = "per-request"
	// poolNone: a new connection per request, always closed after it (the
	// 2018 Java bank before HikariCP, the 2016 servlet).
	poolNone = "none"
)

// openPostgres creates the PostgreSQL pool for rawURL (nil when unset). It
// does not connect: the pool opens connections on demand and keeps them,
// so the service starts, and recovers, whether or not the database is up.
func openPostgres(rawURL string, poolSize int, limits dbLimits, mode string) (*postgres, error) {
	if rawURL == "" {
		return nil, nil
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w (want postgres://user:password@host:port/dbname?sslmode=disable)", err)
	}
	cfg.MaxConns = int32(poolSize)
	cfg.ConnConfig.ConnectTimeout = connectTimeout
	// The default statement cache mode prepares each statement once per
	// connection, then runs it with one round trip: keep it.
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	one := cfg.Copy()
	one.MaxConns, one.MinConns = 1, 0
	return &postgres{pool: pool, limits: limits, mode: mode, cfg: one}, nil
}

// acquire borrows a connection, waiting at most limits.acquire, and
// returns it with the context its statements run in. The caller defers
// done(&err) with its named result, which releases both (and, for the
// per-request mistake, decides whether the request's pool is closed).
func (p *postgres) acquire(r *http.Request) (conn *pgxpool.Conn, ctx context.Context, done func(*error), err error) {
	pool := p.pool
	if p.mode != poolShared {
		// The mistakes: a pool of one connection made for this request.
		if pool, err = pgxpool.NewWithConfig(r.Context(), p.cfg); err != nil {
			return nil, nil, nil, err
		}
	}
	actx, cancel := context.WithTimeout(r.Context(), p.limits.acquire)
	conn, err = pool.Acquire(actx)
	cancel()
	if err != nil {
		if p.mode == poolPerRequest {
			p.leaked.Add(1) // the error skips the close
		} else if p.mode == poolNone {
			pool.Close()
		}
		return nil, nil, nil, err
	}
	ctx, cancel = context.WithTimeout(r.Context(), p.limits.query)
	return conn, ctx, func(errp *error) {
		cancel()
		conn.Release()
		if p.mode == poolShared {
			return
		}
		var api *apiError
		if p.mode == poolPerRequest && *errp != nil && !errors.As(*errp, &api) {
			p.leaked.Add(1) // left open, its connection with it
			return
		}
		pool.Close()
	}, nil
}

// showdown:shared begin db-mysql-and-errors

// ping checks that the database answers within d.
func (p *postgres) ping(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return p.pool.Ping(ctx)
}

func (p *postgres) close() { p.pool.Close() }

// mysqlDB is the MariaDB/MySQL pool. database/sql has no bound of its own
// on the wait for a connection (a context deadline would bound the
// statement as well), so a semaphore with one slot per pool connection
// stands in front of it: holding a slot means a connection is free, and
// the wait for a slot is bounded by limits.acquire.
type mysqlDB struct {
	db     *sql.DB
	slots  chan struct{}
	limits dbLimits
	// lastOK is when (UnixNano) a request last finished within its
	// deadline: a pool idle for longer than idleCheck is pinged first.
	// database/sql shares no per-connection idle time, so the pool's
	// stands in for it.
	lastOK atomic.Int64
}

// idleCheck: when no request has finished for longer, acquire pings the
// database (within pingTimeout) before lending a connection, as pgxpool
// does for a connection idle over a second. database/sql cannot tell a
// hung database (connections open, nothing answers) from a slow query;
// the ping can, without cutting slow queries short.
const idleCheck = time.Second

// openMySQL creates the MariaDB/MySQL pool for rawURL (nil when unset),
// without connecting.
func openMySQL(rawURL string, poolSize int, limits dbLimits) (*mysqlDB, error) {
	if rawURL == "" {
		return nil, nil
	}
	cfg, err := mysqlConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("MYSQL_URL: %w (want mysql://user:password@host:port/dbname)", err)
	}
	cfg.Timeout = connectTimeout
	// Safety nets for a database that stops answering on an open
	// connection, like the query context.
	cfg.ReadTimeout = limits.query
	cfg.WriteTimeout = limits.query
	// The driver logs dropped connections itself: send that through slog
	// to stderr like the service's other non-request messages.
	cfg.Logger = slog.NewLogLogger(errorLog.Handler(), slog.LevelWarn)
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("MYSQL_URL: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize) // keep every connection once opened
	db.SetConnMaxLifetime(time.Hour)
	return &mysqlDB{db: db, slots: make(chan struct{}, poolSize), limits: limits}, nil
}

// errNoConnection is the pool wait running out; it reads as unavailable.
var errNoConnection = fmt.Errorf("no database connection free in time: %w", context.DeadlineExceeded)

// acquire takes a slot, waiting at most wait, and returns the context the
// statements run in. The caller calls done when finished.
func (m *mysqlDB) acquire(ctx context.Context, wait, run time.Duration) (context.Context, func(), error) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case m.slots <- struct{}{}:
	case <-t.C:
		return nil, nil, errNoConnection
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if last := m.lastOK.Load(); last != 0 && time.Since(time.Unix(0, last)) > idleCheck { // 0: none yet, no idle connection to doubt
		pctx, cancel := context.WithTimeout(ctx, min(pingTimeout, wait))
		err := m.db.PingContext(pctx)
		cancel()
		if err != nil {
			<-m.slots
			return nil, nil, err
		}
	}
	qctx, cancel := context.WithTimeout(ctx, run)
	return qctx, func() {
		if qctx.Err() == nil {
			m.lastOK.Store(time.Now().UnixNano())
		}
		cancel()
		<-m.slots
	}, nil
}

// ping checks that the database answers within d.
func (m *mysqlDB) ping(ctx context.Context, d time.Duration) error {
	ctx, done, err := m.acquire(ctx, d, d)
	if err != nil {
		return err
	}
	defer done()
	return m.db.PingContext(ctx) // a second ping when the first was acquire's: cheap, and only when idle
}

func (m *mysqlDB) close() { _ = m.db.Close() }

// mysqlConfig turns mysql://user:password@host:port/dbname into the
// driver's configuration (its DSN format is not a URL).
func mysqlConfig(rawURL string) (*mysql.Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return nil, fmt.Errorf("scheme %q is not mysql", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("no host")
	}
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	return cfg, nil
}

// preparedStmt is a MySQL statement prepared on first use. database/sql
// then prepares it on each pool connection as needed and runs it with one
// round trip; an unprepared query with arguments would cost three
// (prepare, execute, close). Preparing lazily lets the service start while
// the database is down.
type preparedStmt struct {
	db    *sql.DB
	query string
	mu    sync.Mutex
	stmt  atomic.Pointer[sql.Stmt]
}

func (p *preparedStmt) get(ctx context.Context) (*sql.Stmt, error) {
	if s := p.stmt.Load(); s != nil {
		return s, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.stmt.Load(); s != nil {
		return s, nil
	}
	s, err := p.db.PrepareContext(ctx, p.query)
	if err != nil {
		return nil, err
	}
	p.stmt.Store(s)
	return s, nil
}

// dbUnavailable reports whether err means the database is down, unreachable,
// refusing connections or too slow (503), rather than a bug (500).
func dbUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"): // connection exception
		case strings.HasPrefix(pgErr.Code, "53"): // insufficient resources: too many connections
		case strings.HasPrefix(pgErr.Code, "57P"): // admin/crash shutdown, cannot connect now
		case pgErr.Code == "28P01" || pgErr.Code == "28000": // refused credentials
		default:
			return false
		}
		return true
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case 1040, // too many connections
			1045,                   // access denied
			1053,                   // server shutdown in progress
			1077,                   // normal shutdown
			1152, 1153, 1158, 1159, // aborted connection, network read/write errors
			1160, 1161, 1927, // network errors, connection killed
			1205: // lock wait timeout
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) ||
		errors.As(err, &netErr) ||
		pgconn.Timeout(err) ||
		errors.Is(err, pgconn.ErrConnClosed) || // a pooled connection that died while idle
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, sql.ErrConnDone) ||
		strings.Contains(err.Error(), "closed pool") // pgxpool after Close
}

// showdown:shared end db-mysql-and-errors
