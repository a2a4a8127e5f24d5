package imported

import (
	"strings"
	"testing"
)

// The k6 fixture was made with k6 v1 against python3 -m http.server: 2 VUs
// for 2 s, each iteration a GET / (200) and a GET /missing (404). k6's own
// end-of-test summary said: http_reqs 1062, http_req_failed 531,
// http_req_duration med=2.45ms max=22.65ms.
func TestReadK6(t *testing.T) {
	res, err := ReadK6("testdata/k6.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != K6 {
		t.Errorf("kind %q, want %q", res.Kind, K6)
	}
	lr := res.Run.Services[0].Levels[0]
	tot := lr.Total
	if tot.Samples != 1062 || tot.Errors != 531 {
		t.Errorf("samples, errors = %d, %d; want 1062, 531 (k6's own summary)", tot.Samples, tot.Errors)
	}
	// HdrHistogram keeps 3 significant digits.
	if d := tot.Latency.Max - 22.65; d < -0.05 || d > 0.05 {
		t.Errorf("max %.3f ms, want 22.65", tot.Latency.Max)
	}
	if d := tot.Latency.P50 - 2.45; d < -0.05 || d > 0.05 {
		t.Errorf("p50 %.3f ms, want 2.45", tot.Latency.P50)
	}
	if lr.Level != 2 {
		t.Errorf("level %d, want 2 VUs", lr.Level)
	}
	d := res.Level
	if len(d.Labels) != 2 || d.Labels[0].Label != "home" || d.Labels[1].Errors != d.Labels[1].Samples {
		t.Errorf("labels %+v: want home (ok) and missing (all 404)", d.Labels)
	}
	if d.Series == nil || len(d.Series.Rows) < 2 {
		t.Fatalf("no time series")
	}
	var n float64
	for _, v := range d.Series.Col("requests") {
		n += v
	}
	if n != 1062 {
		t.Errorf("time series counts %v requests, want 1062", n)
	}
}

// The JMeter fixture is written by hand in JMeter 5's default CSV layout
// (Debian's JMeter 2.13 fails to start here): 2 threads x 150 loops of
// "home" (200, 2-10 ms, one 250 ms stall) and "missing" (404, 1-4 ms).
func TestReadJMeter(t *testing.T) {
	res, err := ReadJMeter("testdata/jmeter.jtl")
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Run.Services[0].Levels[0].Total
	if tot.Samples != 600 || tot.Errors != 300 {
		t.Errorf("samples, errors = %d, %d; want 600, 300", tot.Samples, tot.Errors)
	}
	if tot.Latency.Max < 249 || tot.Latency.Max > 251 {
		t.Errorf("max %.1f ms, want the 250 ms stall", tot.Latency.Max)
	}
	if tot.Latency.Min != 1 {
		t.Errorf("min %.3f ms, want 1", tot.Latency.Min)
	}
	if len(tot.Reasons) == 0 || !strings.HasPrefix(tot.Reasons[0].Reason, "404") {
		t.Errorf("reasons %+v, want 404 first", tot.Reasons)
	}
}
