package db

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cpuTime is the user+system CPU time of process pid (all its threads).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

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
	cpu0 := cpuTime(m.PID())
	b.ResetTimer()
	for range b.N {
		if _, err := Prepare(ctx, "sku", Servers{MariaDB: m}, PrepareOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The server's CPU time is a steadier figure than the wall time on a busy machine.
	b.ReportMetric((cpuTime(m.PID())-cpu0).Seconds()/float64(b.N), "server-cpu-s/op")
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

// BenchmarkStartPostgres measures a start (initdb, start, create database) and Stop.
func BenchmarkStartPostgres(b *testing.B) {
	for range b.N {
		p, err := StartPostgres(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartMariaDB measures a start (install-db, start) and Stop.
func BenchmarkStartMariaDB(b *testing.B) {
	for range b.N {
		m, err := StartMariaDB(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}
