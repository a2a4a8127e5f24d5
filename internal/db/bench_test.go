package db

import (
	"context"
	"io"
	"testing"
)

// BenchmarkPrepareSKU loads the full sku table (DefaultSKURows rows, with
// its index) into a private MariaDB: the goal is at most 30 s per op.
// Run: go test -run '^$' -bench BenchmarkPrepareSKU -benchtime 1x ./internal/db
func BenchmarkPrepareSKU(b *testing.B) {
	ctx := context.Background()
	m, err := StartMariaDB(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Stop()
	b.ResetTimer()
	for range b.N {
		if _, err := Prepare(ctx, "sku", Servers{MariaDB: m}, PrepareOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(DefaultSKURows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkWriteSKURows measures the generator alone.
func BenchmarkWriteSKURows(b *testing.B) {
	for range b.N {
		if err := WriteSKURows(io.Discard, 1, DefaultSKURows); err != nil {
			b.Fatal(err)
		}
	}
}
