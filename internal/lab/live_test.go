package lab

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stack"
	"github.com/showdownlab/showdown/workloads"
)

// TestAwaitQuiet: before a service is frozen, the lab waits for its
// login's database sessions to leave their transactions (a real
// PostgreSQL, a session of the service's login inside BEGIN), and says so
// when one is still busy after quietMax, instead of freezing a holder of
// locks the next reset needs without a word.
func TestAwaitQuiet(t *testing.T) {
	ctx := context.Background()
	d, err := stack.StartDatabases(ctx, []workloads.Engine{workloads.Postgres}, stack.DatabaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	if _, err := d.Prepare(ctx, []string{"bank"}, db.PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, d.Servers.Postgres.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	x := &execution{rn: &Runner{}, rec: &results.Run{}, dbs: d, plan: &plan.Plan{Workloads: []plan.Workload{{Name: "string"}, {Name: "bank"}}}}
	l := &live{x: x, im: plan.Implementation{Service: "go-stdlib"}}
	defer func(d time.Duration) { quietMax = d }(quietMax)
	// begin leaves the service's session inside a transaction, idle.
	begin := func() {
		t.Helper()
		for _, q := range []string{"BEGIN", "SELECT 1"} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Idle outside a transaction: no wait, no word. The bounds on the
	// waits are halves of quietMax, the wait a defect would make, not
	// how fast a busy machine's PostgreSQL answers the lab's look.
	quietMax = 10 * time.Second
	start := time.Now()
	l.awaitQuiet()
	if took := time.Since(start); took > quietMax/2 || len(x.rec.Warnings) != 0 {
		t.Fatalf("idle sessions: waited %s, warnings %q", took, x.rec.Warnings)
	}

	// Inside a transaction that ends after 300 ms: waits for it, no word.
	begin()
	done := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := c.Exec(context.Background(), "COMMIT")
		done <- err
	}()
	start = time.Now()
	l.awaitQuiet()
	took := time.Since(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if took < 250*time.Millisecond || took > quietMax/2 || len(x.rec.Warnings) != 0 {
		t.Errorf("a transaction ending after 300 ms: waited %s, warnings %q; want the wait and no warning", took, x.rec.Warnings)
	}

	// Still inside one at quietMax: frozen anyway, and said.
	begin()
	quietMax = 200 * time.Millisecond
	l.awaitQuiet()
	if len(x.rec.Warnings) != 1 || !strings.Contains(x.rec.Warnings[0], "go-stdlib was frozen with its database sessions still busy") || !strings.Contains(x.rec.Warnings[0], "idle in transaction") {
		t.Errorf("warnings %q, want one naming go-stdlib's busy session", x.rec.Warnings)
	}
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}
