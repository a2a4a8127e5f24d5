package verify

import (
	"context"
	"fmt"
)

// queriedReads is how many times a "from the database" check reads one
// resource; each read must cost the database at least one statement.
const queriedReads = 5

// queriedCheck reads what req gives queriedReads times, each answer checked
// by ok, and wants the database's statement count (Target.Statements) to
// have grown by at least as much, as TechEmpower's verification counts
// queries: a service that answers from a cache of its own fails. The
// resource was read before by earlier checks, so a cache would be warm.
func queriedCheck(t Target, workload, what string, req func() (request, error), ok func(*response) error) check {
	name := fmt.Sprintf("%s/%s come from the database (%d reads, at least %d statements)", workload, what, queriedReads, queriedReads)
	return check{workload: workload, name: name, run: func(ctx context.Context, s *session) error {
		if t.Statements == nil {
			return skipError("needs the Statements hook (the database's statement counter)")
		}
		r, err := req()
		if err != nil {
			return skipError(err.Error())
		}
		before, err := t.Statements(ctx, workload)
		if err != nil {
			return skipf("cannot count the database's statements: %v", err)
		}
		for i := 0; i < queriedReads; i++ {
			if err := (row{status: []int{200}, body: ok}).expect(s.do(ctx, r)); err != nil {
				return fmt.Errorf("read %d of %d: %v", i+1, queriedReads, err)
			}
		}
		after, err := t.Statements(ctx, workload)
		if err != nil {
			return skipf("cannot count the database's statements: %v", err)
		}
		if n := after - before; n < queriedReads {
			return fmt.Errorf("%d reads of %s %s cost the database %d statements, want at least %d: "+
				"the answers came from somewhere else (a cache?); every read must query the database",
				queriedReads, r.method, r.path, n, queriedReads)
		}
		return nil
	}}
}
