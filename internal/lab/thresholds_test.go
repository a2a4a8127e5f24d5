package lab

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/showdownlab/showdown/load"
)

func TestThresholds(t *testing.T) {
	// A loopback server that fails every second request: 50% errors.
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := load.NewAttacker().Attack(ctx, &load.Target{URL: srv.URL + "/x"}, load.ClosedModel{Users: 2, Iterations: 100})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		expr    string
		crossed bool
		err     bool
	}{
		{"errors>1%", true, false},          // half the requests failed
		{"errors>60%", false, false},        // but not more than 60%
		{"p99>1m", false, false},            // loopback answers in far less than a minute
		{"GET /x:errors>=100", true, false}, // a step label, counted
		{"GET /nope:p99>1s", true, true},    // an unknown label cannot be measured: it fails
	}
	var exprs []string
	for _, tc := range tests {
		exprs = append(exprs, tc.expr)
	}
	got := thresholds(exprs, res)
	if len(got) != len(tests) {
		t.Fatalf("got %d verdicts, want %d", len(got), len(tests))
	}
	for i, tc := range tests {
		g := got[i]
		if g.Expr != tc.expr || g.Crossed != tc.crossed || (g.Error != "") != tc.err {
			t.Errorf("%s: got crossed=%v error=%q measured=%v, want crossed=%v error=%v", tc.expr, g.Crossed, g.Error, g.Measured, tc.crossed, tc.err)
		}
	}
	if got[0].Measured != 50 {
		t.Errorf("errors%% measured %v, want 50", got[0].Measured)
	}
}
