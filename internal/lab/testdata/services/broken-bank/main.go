// Command server is a deliberately broken bank for the lab's tests: every
// answer is what the contract asks, so a load test sees no error, but each
// transfer records one unit more in the ledger than it moved. Only an
// audit of the database finds it.
//
// With BROKEN_BANK=uncommitted it breaks differently: every other
// transfer is answered 200 with a made-up id and never written, which the
// invariants of the ledger cannot see (nothing moved, nothing recorded);
// only counting the rows against the answers finds it. With
// BROKEN_BANK=racy it moves money as a careless service does: it reads
// both balances and writes them back computed, over a pool of
// connections and without a transaction, so transfers at once on the
// same rows lose updates (every answer still a 200, each ledger row
// right). With BROKEN_BANK=none it is a correct bank (for the audit's
// negative test).
//
// With BROKEN_BANK=leak it is a correct bank that leaks database
// connections: every LEAK_CONN_EVERY-th transfer (200 unless set) opens
// one more connection and never closes it, no sooner than LEAK_CONN_GAP
// after the last (250ms unless set) and up to LEAK_CONN_MAX of them (40
// unless set). The gap ties the leak to the time served rather than to
// the host's speed, and the cap keeps a test's server from running out
// of connections for the other services.
package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// One connection behind a mutex: the fixture needs no pool, and uses
	// only what the showdown module already depends on.
	conn, err := pgx.Connect(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		panic(err)
	}
	defer conn.Close(context.Background())
	mode := os.Getenv("BROKEN_BANK") // "", "uncommitted", "racy", "none" or "leak"
	var transfers atomic.Int64
	leakEvery, leakMax := envInt("LEAK_CONN_EVERY", 200), envInt("LEAK_CONN_MAX", 40)
	leakGap, err := time.ParseDuration(os.Getenv("LEAK_CONN_GAP"))
	if err != nil {
		leakGap = 250 * time.Millisecond
	}
	// The leaked connections stay referenced, so no finalizer closes them.
	var leaked []*pgx.Conn
	var lastLeak time.Time
	var leakMu sync.Mutex
	leak := func() {
		leakMu.Lock()
		defer leakMu.Unlock()
		if len(leaked) >= leakMax || time.Since(lastLeak) < leakGap {
			return
		}
		c, err := pgx.Connect(context.Background(), os.Getenv("DATABASE_URL"))
		if err == nil {
			leaked, lastLeak = append(leaked, c), time.Now()
		}
	}
	var mu sync.Mutex
	queryRow := func(ctx context.Context, sql string, args ...any) func(...any) error {
		return func(dest ...any) error {
			mu.Lock()
			defer mu.Unlock()
			return conn.QueryRow(ctx, sql, args...).Scan(dest...)
		}
	}
	// The racy bank's pool: each statement on whichever connection is
	// free, so two transfers interleave their reads and writes.
	pool := make(chan *pgx.Conn, 8)
	if mode == "racy" {
		for range cap(pool) {
			c, err := pgx.Connect(ctx, os.Getenv("DATABASE_URL"))
			if err != nil {
				panic(err)
			}
			defer c.Close(context.Background())
			pool <- c
		}
	}
	pooled := func(ctx context.Context, sql string, args ...any) func(...any) error {
		return func(dest ...any) error {
			c := <-pool
			defer func() { pool <- c }()
			if len(dest) == 0 {
				_, err := c.Exec(ctx, sql, args...)
				return err
			}
			return c.QueryRow(ctx, sql, args...).Scan(dest...)
		}
	}
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /client/new/{balance}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := strconv.ParseInt(r.PathValue("balance"), 10, 64)
		var id, bal int64
		err := queryRow(r.Context(), `WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c`, b)(&id, &bal)
		if err != nil {
			reply(w, 500, map[string]string{"error": err.Error()})
			return
		}
		reply(w, 200, map[string]int64{"id": id, "balance": bal})
	})
	mux.HandleFunc("GET /client/{id}/balance", func(w http.ResponseWriter, r *http.Request) {
		var bal int64
		if err := queryRow(r.Context(), `SELECT balance FROM client WHERE id = $1`, r.PathValue("id"))(&bal); err != nil {
			reply(w, 404, map[string]string{"error": "no such client"})
			return
		}
		reply(w, 200, map[string]int64{"balance": bal})
	})
	mux.HandleFunc("POST /transaction", func(w http.ResponseWriter, r *http.Request) {
		var t struct{ From, To, Amount int64 }
		var in map[string]int64
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, 400, map[string]string{"error": "bad json"})
			return
		}
		t.From, t.To, t.Amount = in["from_client_id"], in["to_client_id"], in["amount"]
		var id int64
		if mode == "uncommitted" && transfers.Add(1)%2 == 0 {
			reply(w, 200, map[string]int64{"id": 1 << 40, "from_client_id": t.From, "to_client_id": t.To, "amount": t.Amount})
			return
		}
		if mode == "leak" && leakEvery > 0 && transfers.Add(1)%int64(leakEvery) == 0 {
			leak()
		}
		if mode == "racy" {
			// Read, compute, write back: another transfer between the
			// read and the write is lost.
			var from, to int64
			err := pooled(r.Context(), `SELECT balance FROM client WHERE id = $1`, t.From)(&from)
			if err == nil {
				err = pooled(r.Context(), `SELECT balance FROM client WHERE id = $1`, t.To)(&to)
			}
			if err != nil {
				reply(w, 404, map[string]string{"error": "no such client"})
				return
			}
			if from < t.Amount {
				reply(w, 409, map[string]string{"error": "insufficient funds"})
				return
			}
			err = pooled(r.Context(), `UPDATE client SET balance = $1 WHERE id = $2`, from-t.Amount, t.From)()
			if err == nil {
				err = pooled(r.Context(), `UPDATE client SET balance = $1 WHERE id = $2`, to+t.Amount, t.To)()
			}
			if err == nil {
				err = pooled(r.Context(), `INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($1, $2, $3) RETURNING id`, t.From, t.To, t.Amount)(&id)
			}
			if err != nil {
				reply(w, 500, map[string]string{"error": err.Error()})
				return
			}
			reply(w, 200, map[string]int64{"id": id, "from_client_id": t.From, "to_client_id": t.To, "amount": t.Amount})
			return
		}
		// The defect: the ledger row says Amount+1.
		recorded := t.Amount + 1
		if mode != "" {
			recorded = t.Amount
		}
		err := queryRow(r.Context(), `WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id`,
			t.Amount, t.From, t.Amount, t.To, t.From, t.To, recorded)(&id)
		if err != nil {
			reply(w, 500, map[string]string{"error": err.Error()})
			return
		}
		reply(w, 200, map[string]int64{"id": id, "from_client_id": t.From, "to_client_id": t.To, "amount": t.Amount})
	})
	srv := &http.Server{Addr: "127.0.0.1:" + os.Getenv("PORT"), Handler: mux}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		panic(err)
	}
}

// envInt is the integer in environment variable name, or def when unset
// or not a number.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}
