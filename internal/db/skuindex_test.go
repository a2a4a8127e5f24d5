package db

import (
	"context"
	"testing"
)

// TestSetSKUIndex switches the sku table between the source's full scans
// and the index on the same rows, as a plan's sku_index dimension does:
// the optimizer's plan for the lookup follows, and the rows stay.
func TestSetSKUIndex(t *testing.T) {
	s := servers(t)
	ctx := context.Background()
	if _, err := Prepare(ctx, "sku", s, PrepareOptions{SKURows: testRows, Seed: 7, NoSKUIndex: true}); err != nil {
		t.Fatal(err)
	}
	rows := skuChecksum(t, s)
	// Counted from the server's catalogue, apart from SetSKUIndex's own query.
	indexed := func() string {
		v, err := engines[1].value(ctx, s.MariaDB.URL(), "SELECT count(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'purch_sku_master' AND column_name = 'sku_id'")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	steps := []struct {
		name string
		on   bool
	}{
		{"prepared without", false}, // the state Prepare left: nothing to do
		{"create", true},            // the fix
		{"create again", true},      // idempotent
		{"drop", false},             // back to the source's scans
		{"drop again", false},       // idempotent
		{"create after drop", true}, // and back
	}
	for _, st := range steps {
		if err := SetSKUIndex(ctx, s, st.on); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		want := map[bool]string{false: "0", true: "1"}[st.on]
		if got := indexed(); got != want {
			t.Errorf("%s: %s indexes on sku_id, want %s", st.name, got, want)
		}
		if has, err := HasSKUIndex(ctx, s); err != nil || has != st.on {
			t.Errorf("%s: HasSKUIndex = %v, %v; want %v", st.name, has, err, st.on)
		}
		if got := skuChecksum(t, s); got != rows {
			t.Errorf("%s: rows changed: %s, want %s", st.name, got, rows)
		}
	}
}
