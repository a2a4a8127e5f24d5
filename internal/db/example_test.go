package db_test

import (
	"context"
	"fmt"
	"log"

	"github.com/showdownlab/showdown/internal/db"
)

// A lab run: start the servers a set of workloads needs, prepare each
// workload, reset between levels, audit at the end, stop on the way out
// (also after a failure or Ctrl-C, when ctx is cancelled).
func Example() {
	ctx := context.Background()
	pg, err := db.StartPostgres(ctx)
	if err != nil {
		log.Fatal(err) // a *db.MissingError's Hint() says what to install
	}
	defer pg.Stop()
	my, err := db.StartMariaDB(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer my.Stop()
	s := db.Servers{Postgres: pg, MariaDB: my}

	p, err := db.Prepare(ctx, "sku", s, db.PrepareOptions{SKURows: 10_000})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("known sku_ids:", len(p.KnownSKUs)) // the service gets MYSQL_URL = my.URL()

	if _, err := db.Prepare(ctx, "bank", s, db.PrepareOptions{}); err != nil {
		log.Fatal(err)
	}
	// ... run a level against a service given DATABASE_URL = pg.URL() ...
	violations, err := db.Audit(ctx, "bank", s, -1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bank invariants broken:", len(violations))
	for _, v := range violations {
		fmt.Println("broken:", v.Check, v.Detail)
	}
	if err := db.Reset(ctx, "bank", s); err != nil {
		log.Fatal(err)
	}
	// Output:
	// known sku_ids: 10
	// bank invariants broken: 0
}
