package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/showdownlab/showdown/workloads"
)

// Bounds of the database outage checks.
const (
	// outageAnswer is how fast a request must get its 503 while the
	// database is down: the contract's 3 s plus half a second for a busy
	// machine's scheduling.
	outageAnswer = 3*time.Second + 500*time.Millisecond
	hookTimeout  = 60 * time.Second // one DatabaseDown or DatabaseUp call
)

// hangSettle is how long the database stays hung before the first
// request: a pool checks a connection that was idle for over a second
// (pgx, HikariCP) before it lends it out, which is how a service tells a
// hung database from a slow query (a variable so the suite's own tests
// can shorten it).
var hangSettle = 1500 * time.Millisecond

// recoveryWait bounds the wait for a service to recover once the database
// is back (a variable so the suite's own tests can shorten it).
var recoveryWait = 15 * time.Second

// needsDB lists, for each database workload, requests that need the
// database: a read and a write, both well-formed.
var needsDB = map[string][]request{
	"bank": {
		get(fmt.Sprintf("/client/%d/balance", maxID-7)),
		post("/transaction", fmt.Sprintf(`{"from_client_id":%d,"to_client_id":%d,"amount":1}`, maxID-7, maxID-8)),
		post("/client/new/1", ""),
	},
	"users": {
		get(fmt.Sprintf("/user/%d", maxID-7)),
		post("/user", `{"email":"outage@example.com","password":"p"}`),
	},
	"sku": {
		get(fmt.Sprintf("/sku/%d", maxID-7)),
	},
}

// outageStages stops each database workload's database, expects fast
// 503s, starts it again and expects the service to recover by itself.
// Workloads on the same engine (bank and users on PostgreSQL) share one
// outage: each one's DatabaseDown and DatabaseUp is still called, and a
// second call for a database already down (up) is expected to do nothing.
func outageStages(t Target) []stage {
	var cs []check
	var engines []string
	groups := map[string][]string{}
	for _, w := range t.Workloads {
		if _, ok := needsDB[w]; !ok {
			continue
		}
		e := string(workloads.Database(w))
		if _, seen := groups[e]; !seen {
			engines = append(engines, e)
		}
		groups[e] = append(groups[e], w)
	}
	for _, e := range engines {
		ws := groups[e]
		if t.DatabaseDown == nil || t.DatabaseUp == nil {
			for _, w := range ws {
				cs = append(cs, check{workload: w, name: w + "/database outage -> 503, then recovery", run: func(context.Context, *session) error {
					return skipError("needs the DatabaseDown and DatabaseUp hooks")
				}})
			}
			continue
		}
		cs = append(cs, outageChecks(t, ws)...)
	}
	for _, e := range engines {
		cs = append(cs, hangChecks(t, groups[e])...)
	}
	return []stage{fixed(cs...)}
}

// outageChecks takes down the database of ws (workloads of one engine),
// checks each, and brings it back.
func outageChecks(t Target, ws []string) []check {
	var downErr error
	var cs []check
	for _, w := range ws {
		cs = append(cs, check{workload: w, name: w + "/database down -> 503 within 3 s", run: func(ctx context.Context, s *session) error {
			hctx, cancel := context.WithTimeout(ctx, hookTimeout)
			defer cancel()
			if err := t.DatabaseDown(hctx, w); err != nil {
				downErr = err
				return fmt.Errorf("the DatabaseDown hook failed: %v", err)
			}
			for _, r := range needsDB[w] {
				r.timeout = outageAnswer + 5*time.Second
				if err := unavailable(r, s.do(ctx, r), "down"); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	w0 := ws[0]
	whileDown := func(name string, run func(ctx context.Context, s *session) error) check {
		return check{workload: w0, name: w0 + "/" + name, run: func(ctx context.Context, s *session) error {
			if downErr != nil {
				return skipf("the DatabaseDown hook failed: %v", downErr)
			}
			return run(ctx, s)
		}}
	}
	cs = append(cs, whileDown("health 503 while database down", func(ctx context.Context, s *session) error {
		r := get("/health")
		r.timeout = outageAnswer + 5*time.Second
		resp := s.do(ctx, r)
		if err := (row{status: []int{503}}).expect(resp); err != nil {
			return err
		}
		if resp.took > outageAnswer {
			return fmt.Errorf("503 after %v, want within about 1 s (the ping's timeout)", resp.took.Round(time.Millisecond))
		}
		return nil
	}))
	if slices.Contains(t.Workloads, "string") {
		cs = append(cs, whileDown("string keeps working while database down", func(ctx context.Context, s *session) error {
			return (row{status: []int{200}, body: upper("STILL")}).expect(s.do(ctx, post("/uppercase", `{"s":"still"}`)))
		}))
	}
	for _, w := range ws {
		cs = append(cs, check{workload: w, name: w + "/recovers after database up", run: func(ctx context.Context, s *session) error {
			hctx, cancel := context.WithTimeout(ctx, hookTimeout)
			defer cancel()
			if err := t.DatabaseUp(hctx, w); err != nil {
				return fmt.Errorf("the DatabaseUp hook failed: %v", err)
			}
			return s.recovered(ctx, needsDB[w][0])
		}})
	}
	return cs
}

// driverText are fragments of a database driver's message (the login and
// database name, the address, SQL) that a 503 body must not echo.
var driverText = []string{"showdown", "127.0.0.1", "localhost", "select ", "insert ", "update ", "password", "sqlstate"}

// unavailable checks the answer to r while the database is down or hung:
// 503 within outageAnswer, its body free of the driver's text.
func unavailable(r request, resp *response, state string) error {
	if err := (row{status: []int{503}}).expect(resp); err != nil {
		return fmt.Errorf("%s %s with the database %s: %v", r.method, r.path, state, err)
	}
	if resp.took > outageAnswer {
		return fmt.Errorf("%s %s with the database %s: 503 after %v, want within 3 s (bounded connect, pool-acquire and query timeouts)",
			r.method, r.path, state, resp.took.Round(time.Millisecond))
	}
	body := strings.ToLower(string(resp.body))
	for _, f := range driverText {
		if strings.Contains(body, f) {
			return fmt.Errorf("%s %s with the database %s: the 503 body echoes the driver (%q): %s; say \"database unavailable\" and log the rest",
				r.method, r.path, state, f, trunc(string(resp.body), 300))
		}
	}
	return nil
}

// hangChecks freezes each workload's database in turn (DatabaseHang),
// expects fast 503s from requests that need it, thaws it (DatabaseResume,
// on every path out of the check) and expects the service to recover.
func hangChecks(t Target, ws []string) []check {
	var cs []check
	for _, w := range ws {
		cs = append(cs, check{workload: w, name: w + "/database hung (SIGSTOP) -> 503 within 3 s, then recovery", run: func(ctx context.Context, s *session) (err error) {
			if t.DatabaseHang == nil || t.DatabaseResume == nil {
				return skipError("needs the DatabaseHang and DatabaseResume hooks")
			}
			resumed := false
			resume := func() error {
				resumed = true
				// Its own context: the suite's may be the one that ended.
				rctx, cancel := context.WithTimeout(context.Background(), hookTimeout)
				defer cancel()
				return t.DatabaseResume(rctx, w)
			}
			defer func() {
				if !resumed {
					if rerr := resume(); rerr != nil && err == nil {
						err = fmt.Errorf("the DatabaseResume hook failed: %v", rerr)
					}
				}
			}()
			hctx, cancel := context.WithTimeout(ctx, hookTimeout)
			defer cancel()
			if err := t.DatabaseHang(hctx, w); err != nil {
				return fmt.Errorf("the DatabaseHang hook failed: %v", err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(hangSettle):
			}
			for _, r := range needsDB[w] {
				r.timeout = outageAnswer + 5*time.Second
				if err := unavailable(r, s.do(ctx, r), "hung"); err != nil {
					return err
				}
			}
			if err := resume(); err != nil {
				return fmt.Errorf("the DatabaseResume hook failed: %v", err)
			}
			return s.recovered(ctx, needsDB[w][0])
		}})
	}
	return cs
}

// recovered polls read until it answers as with a live database (200 or
// 404) and /health is 200 again, for at most recoveryWait.
func (s *session) recovered(ctx context.Context, read request) error {
	read.timeout = 5 * time.Second
	deadline := time.Now().Add(recoveryWait)
	var last string
	for {
		resp := s.do(ctx, read)
		if !resp.none && (resp.status == 200 || resp.status == 404) {
			h := s.do(ctx, get("/health"))
			if !h.none && h.status == 200 {
				return nil
			}
			last = fmt.Sprintf("GET /health: %s", firstLine(h.dump()))
		} else {
			last = fmt.Sprintf("%s %s: %s", read.method, read.path, firstLine(resp.dump()))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("not recovered %v after the database came back (last answer: %s); the service must reconnect by itself, without a restart", recoveryWait, last)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
