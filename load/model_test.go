package load

import (
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"5000", 5000, true},         // plain number: per second
		{"5000/s", 5000, true},       // explicit per second
		{"300/1m", 5, true},          // per minute
		{"300/m", 5, true},           // unit without a count
		{"10/500ms", 20, true},       // sub-second period
		{"0.5", 0.5, true},           // fractional rates are fine
		{"0", 0, false},              // zero is no rate
		{"-5", 0, false},             // negative
		{"fast", 0, false},           // not a number
		{"5000/fortnight", 0, false}, // unknown period
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseWarmup(t *testing.T) {
	tests := []struct {
		in   string
		want WarmupPhase
		ok   bool
	}{
		{"", WarmupPhase{}, true},                              // none
		{"1000", WarmupPhase{Requests: 1000}, true},            // a request count
		{"10s", WarmupPhase{Duration: 10 * time.Second}, true}, // a time
		{"ten", WarmupPhase{}, false},                          // neither
	}
	for _, tt := range tests {
		got, err := ParseWarmup(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseWarmup(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"1/1", Shard{1, 1}, true}, // the whole load
		{"2/4", Shard{2, 4}, true}, // a quarter
		{"0/4", Shard{}, false},    // shards count from 1
		{"5/4", Shard{}, false},    // beyond the count
		{"2", Shard{}, false},      // no count
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseShard(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestModelValidate(t *testing.T) {
	tests := []struct {
		m    Model
		errs int
	}{
		{OpenModel{Rate: 10, Duration: time.Second}, 0}, // fine
		{OpenModel{}, 2}, // neither rate nor duration
		{ClosedModel{Users: 1, Iterations: 1}, 0},                         // iterations suffice
		{ClosedModel{Users: 0, Duration: time.Second}, 1},                 // no users
		{ClosedModel{Users: 1}, 1},                                        // runs forever
		{ClosedModel{Users: 1, Duration: -time.Second, Iterations: 1}, 1}, // negative
	}
	for _, tt := range tests {
		if got := tt.m.Validate(); len(got) != tt.errs {
			t.Errorf("%+v.Validate() = %v, want %d errors", tt.m, got, tt.errs)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in   string
		want Threshold
		ok   bool
	}{
		{"p99>200ms", Threshold{Metric: "p99", Op: ">", Value: 200}, true},                             // latency percentile
		{"errors>1%", Threshold{Metric: "errors", Op: ">", Value: 1, Percent: true}, true},             // error share
		{"errors>=10", Threshold{Metric: "errors", Op: ">=", Value: 10}, true},                         // error count
		{"transfer:p95>1s", Threshold{Label: "transfer", Metric: "p95", Op: ">", Value: 1000}, true},   // per label
		{"GET /a:b:p99.9>2ms", Threshold{Label: "GET /a:b", Metric: "p99.9", Op: ">", Value: 2}, true}, // label with a colon
		{"rate<900", Threshold{Metric: "rate", Op: "<", Value: 900}, true},                             // throughput floor
		{"svc.p50 > 5ms", Threshold{Metric: "svc.p50", Op: ">", Value: 5}, true},                       // service time, spaces
		{"p99=200ms", Threshold{}, false},                                                              // no such operator
		{"p101>1s", Threshold{}, false},                                                                // not a percentile
		{"p99>fast", Threshold{}, false},                                                               // latency needs a duration
		{"speed>1", Threshold{}, false},                                                                // unknown metric
		{"rate<5%", Threshold{}, false},                                                                // rate is not a share
		{"x:late>1", Threshold{}, false},                                                               // late is global
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseThreshold(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if !tt.ok {
			continue
		}
		tt.want.Expr = tt.in
		if got != tt.want {
			t.Errorf("ParseThreshold(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
