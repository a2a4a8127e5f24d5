package main

import (
	"testing"
	"time"
)

func TestUntilPhase(t *testing.T) {
	p, ph := 5*time.Second, 2*time.Second
	tests := []struct{ elapsed, want time.Duration }{
		{0, 2 * time.Second},                               // the first period's phase
		{2 * time.Second, 0},                               // at it
		{3 * time.Second, 4 * time.Second},                 // just past: the next period's
		{9500 * time.Millisecond, 2500 * time.Millisecond}, // in a stall at the end of the second period
	}
	for _, tt := range tests {
		if got := untilPhase(tt.elapsed, p, ph); got != tt.want {
			t.Errorf("untilPhase(%s) = %s, want %s", tt.elapsed, got, tt.want)
		}
	}
}

func TestParseFloor(t *testing.T) {
	var o outcome
	parseFloor("requests 150000 in 3.00 s: 50000 req/s, CPU 1.200 s (40%), 8.00 us per request\n", 3*time.Second, &o)
	if o.requests != 150000 || o.rps != 50000 {
		t.Errorf("requests %d, rate %g; want 150000, 50000", o.requests, o.rps)
	}
	o = outcome{}
	parseFloor("12000 req/s\n", 2*time.Second, &o)
	if o.requests != 24000 {
		t.Errorf("from the rate alone: %d requests, want 24000", o.requests)
	}
}

func TestParseWrk2(t *testing.T) {
	out := `Running 10s test @ http://127.0.0.1:8080/
  1 threads and 50 connections
  Latency Distribution (HdrHistogram - Recorded Latency)
 50.000%    1.37ms
 75.000%    1.85ms
 99.000%  958.46ms
100.000%    1.03s
  20000 requests in 10.00s, 2.50MB read
Requests/sec:   2000.00
`
	var o outcome
	parseWrk2(out, &o)
	if o.requests != 20000 || o.latP50 != 1.37 || o.latP99 != 958.46 || o.latMax != 1030 {
		t.Errorf("requests %d, p50 %g, p99 %g, max %g; want 20000, 1.37, 958.46, 1030", o.requests, o.latP50, o.latP99, o.latMax)
	}
}
