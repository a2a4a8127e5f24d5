package main

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestCheckInt(t *testing.T) {
	tests := []struct {
		text   string
		lo, hi int64
		want   int64
		status int // 0: accepted
	}{
		{"10", 1, maxAmount, 10, 0},                       // plain integer
		{"10.0", 1, maxAmount, 10, 0},                     // integral double
		{"1e1", 1, maxAmount, 10, 0},                      // exponent form
		{"1E+1", 1, maxAmount, 10, 0},                     // upper-case exponent with sign
		{"10.5", 1, maxAmount, 0, 400},                    // not integral
		{"0", 1, maxID, 0, 400},                           // below an id's range
		{"-0", 1, maxAmount, 0, 400},                      // negative zero is zero
		{"-5", 1, maxAmount, 0, 400},                      // negative
		{"9007199254740991", 1, maxID, maxID, 0},          // 2^53-1, the largest id
		{"9007199254740992", 1, maxID, 0, 400},            // 2^53
		{"9007199254740993", 1, maxID, 0, 400},            // rounds to 2^53 as a double
		{"1000000000000", 1, maxAmount, maxAmount, 0},     // 10^12, the largest amount
		{"1000000000001", 1, maxAmount, 0, 400},           // over 10^12
		{"1e400", 1, maxAmount, 0, 400},                   // overflows a double
		{"1e-400", 1, maxAmount, 0, 400},                  // underflows to 0
		{"0.5e1", 1, maxAmount, 5, 0},                     // fraction that scales to an integer
		{"100000000000000000000", 1, maxID, 0, 400},       // far beyond int64
		{"4.0000000000000001", 1, maxAmount, 4, 0},        // equals 4 as a double, as in JavaScript
		{"1.0000000000000002", 1, maxAmount, 0, 400},      // the double just above 1 is not integral
		{"123456789012.0", 1, maxAmount, 123456789012, 0}, // big integral double
	}
	for _, tt := range tests {
		got, err := checkInt("f", tt.text, tt.lo, tt.hi)
		if status := statusOf(err); status != tt.status || got != tt.want {
			t.Errorf("checkInt(%q) = %d, status %d; want %d, status %d (err %v)", tt.text, got, status, tt.want, tt.status, err)
		}
	}
}

func TestParseDigits(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"1", 1, true},   // one digit
		{"007", 7, true}, // leading zeros are digits
		{"9999999999999999", 9999999999999999, true}, // 16 digits, the most allowed
		{"00000000000000001", 0, false},              // 17 digits
		{"", 0, false},                               // empty
		{"-1", 0, false},                             // sign
		{"+1", 0, false},                             // plus sign
		{"1.5", 0, false},                            // decimal point
		{"abc", 0, false},                            // letters
		{"..", 0, false},                             // what %2e%2e decodes to
		{" 1", 0, false},                             // space
		{"١", 0, false},                              // a non-ASCII digit
	}
	for _, tt := range tests {
		got, ok := parseDigits(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseDigits(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsCleanPath(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"/", true},                      // root
		{"/client/1/balance", true},      // a route
		{"/uppercase/", true},            // trailing slash is kept by the mux (then 404s)
		{"/client/../balance", false},    // dot-dot
		{"/client/./1", false},           // dot
		{"//uppercase", false},           // double slash
		{"/a/..", false},                 // trailing dot-dot
		{"/client/%2e%2e/balance", true}, // escaped dots are a parameter, not a step
		{"", false},                      // empty
	}
	for _, tt := range tests {
		if got := isCleanPath(tt.in); got != tt.want {
			t.Errorf("isCleanPath(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestToUpper(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello", "HELLO"},                 // ASCII fast path
		{"HELLO 123", "HELLO 123"},         // nothing to change
		{"straße", "STRASSE"},              // SpecialCasing: one code point becomes two
		{"ǆ", "Ǆ"},                         // title-case digraph upper-cases to the capital form
		{"ﬁ", "FI"},                        // ligature expands
		{"ŉ", "ʼN"},                        // SpecialCasing with a modifier letter
		{"i", "I"},                         // no Turkish dotted I: locale-independent
		{"😀a", "😀A"},                       // astral code points pass through
		{"mixed é ascii", "MIXED É ASCII"}, // non-ASCII anywhere takes the Unicode path
	}
	for _, tt := range tests {
		if got := toUpper(tt.in); got != tt.want {
			t.Errorf("toUpper(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := loadConfig(env())
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if c.host != "127.0.0.1" || c.port != "8080" || c.poolSize != 20 || c.logRequests || c.limits != (dbLimits{2 * time.Second, 30 * time.Second}) {
		t.Errorf("defaults = %+v", c)
	}
	_, err = loadConfig(env("PORT", "http", "DB_POOL_SIZE", "0", "LOG_REQUESTS", "yes", "DB_ACQUIRE_TIMEOUT", "2", "DB_QUERY_TIMEOUT", "-1s"))
	if err == nil {
		t.Fatal("bad values accepted")
	}
	// Every mistake is reported at once.
	for _, name := range []string{"PORT", "DB_POOL_SIZE", "LOG_REQUESTS", "DB_ACQUIRE_TIMEOUT", "DB_QUERY_TIMEOUT"} {
		if !strings.Contains(err.Error(), name+"=") {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

func TestMySQLConfig(t *testing.T) {
	cfg, err := mysqlConfig("mysql://u:p%40ss@db.local/shop")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "u" || cfg.Passwd != "p@ss" || cfg.Addr != "db.local:3306" || cfg.DBName != "shop" {
		t.Errorf("got user %q pass %q addr %q db %q", cfg.User, cfg.Passwd, cfg.Addr, cfg.DBName)
	}
	if _, err := mysqlConfig("postgres://u@h/db"); err == nil {
		t.Error("a postgres URL was accepted as MYSQL_URL")
	}
}

// statusOf is the status an error maps to, 0 for none.
func statusOf(err error) int {
	if err == nil {
		return 0
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status
	}
	return http.StatusInternalServerError
}

// TestMySQLSlots checks the bounded wait in front of database/sql: with
// every slot taken, acquire gives up after its wait with an error that
// reads as "unavailable" (503), and a released slot is free again.
func TestMySQLSlots(t *testing.T) {
	m := &mysqlDB{slots: make(chan struct{}, 1)}
	_, done, err := m.acquire(context.Background(), time.Second, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = m.acquire(context.Background(), 20*time.Millisecond, time.Second)
	if !errors.Is(err, errNoConnection) || !dbUnavailable(err) {
		t.Errorf("acquire on a full pool: %v, want errNoConnection, unavailable", err)
	}
	done()
	_, done, err = m.acquire(context.Background(), time.Second, time.Second)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	done()
}

func TestDBUnavailable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "08006"}, true},                                // connection failure
		{&pgconn.PgError{Code: "57P01"}, true},                                // admin shutdown (database stopped)
		{&pgconn.PgError{Code: "53300"}, true},                                // too many connections
		{&pgconn.PgError{Code: "42P01"}, false},                               // undefined table: a bug
		{&pgconn.PgError{Code: "23514"}, false},                               // check violation: a bug
		{&mysql.MySQLError{Number: 1040}, true},                               // too many connections
		{&mysql.MySQLError{Number: 1146}, false},                              // table does not exist: a bug
		{fmt.Errorf("query: %w", syscall.ECONNREFUSED), true},                 // refused, wrapped
		{&net.OpError{Op: "dial", Err: errors.New("no route to host")}, true}, // any network error
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},                   // connection cut mid-answer
		{fmt.Errorf("batch: %w", pgconn.ErrConnClosed), true},                 // pgx on a connection that died
		{errNoConnection, true},                                               // pool wait ran out
		{driver.ErrBadConn, true},                                             // database/sql's broken connection
		{errors.New("can't scan into dest[0]"), false},                        // a plain bug
	}
	for _, tt := range tests {
		if got := dbUnavailable(tt.err); got != tt.want {
			t.Errorf("dbUnavailable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
