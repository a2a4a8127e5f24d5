package db

import (
	"context"
	"testing"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	p, err := StartPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	m, err := StartMariaDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	s := Servers{p, m}
	for _, w := range []string{"bank", "users", "sku", "string"} {
		pr, err := Prepare(ctx, w, s, PrepareOptions{SKURows: 10000})
		if err != nil {
			t.Fatal(w, err)
		}
		t.Log(w, pr.KnownSKUs)
		v, err := Audit(ctx, w, s, 0)
		t.Log(w, v, err)
		if err := Reset(ctx, w, s); err != nil {
			t.Fatal(err)
		}
	}
	t.Log(p.URL(), m.URL(), p.PID(), m.PID())
}
