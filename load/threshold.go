package load

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ThresholdSyntax documents what ParseThreshold accepts.
const ThresholdSyntax = `[LABEL:]METRIC OP VALUE, the condition that FAILS the run, e.g.
  p99>200ms   errors>1%   'GET /accounts:p95>1s'   rate<900   mean>=50ms
METRIC: p50 p90 p95 p99 p99.9 (any pNN), mean, min, max (latency from the intended send time);
        svc.p99 ... (service time, same names with svc.);
        errors (count, or percent of samples with %); rate (samples/s); late, dropped (sends)
OP: < <= > >=   VALUE: a duration (200ms, 1s) for latency metrics, a number otherwise`

// Threshold is a condition on a Result that fails the run when true.
type Threshold struct {
	// Expr is the text it was parsed from.
	Expr string
	// Label restricts it to one step label ("" for the total).
	Label string
	// Metric is e.g. "p99", "svc.p95", "errors", "rate".
	Metric string
	// Op is one of < <= > >=.
	Op string
	// Value is in ms for latency metrics, percent for "errors" with
	// Percent, otherwise a plain number.
	Value float64
	// Percent marks a percentage value (errors, late, dropped).
	Percent bool
}

// ParseThreshold parses one --fail-if expression (see ThresholdSyntax).
func ParseThreshold(s string) (Threshold, error) {
	t := Threshold{Expr: s}
	opAt := strings.IndexAny(s, "<>")
	if opAt < 0 {
		return t, fmt.Errorf("threshold %q: no operator (< <= > >=)", s)
	}
	lhs, rest := strings.TrimSpace(s[:opAt]), s[opAt:]
	t.Op = rest[:1]
	if strings.HasPrefix(rest[1:], "=") {
		t.Op += "="
	}
	val := strings.TrimSpace(rest[len(t.Op):])
	if i := strings.LastIndexByte(lhs, ':'); i >= 0 {
		t.Label, lhs = strings.TrimSpace(lhs[:i]), strings.TrimSpace(lhs[i+1:])
	}
	t.Metric = strings.ToLower(lhs)
	metric := strings.TrimPrefix(t.Metric, "svc.")
	latency := false
	switch {
	case metric == "mean" || metric == "min" || metric == "max" || metric == "avg" || metric == "med":
		latency = true
	case strings.HasPrefix(metric, "p"):
		q, err := strconv.ParseFloat(metric[1:], 64)
		if err != nil || q <= 0 || q > 100 {
			return t, fmt.Errorf("threshold %q: unknown metric %q", s, t.Metric)
		}
		latency = true
	case t.Metric == "errors" || t.Metric == "rate" || t.Metric == "late" || t.Metric == "dropped":
	default:
		return t, fmt.Errorf("threshold %q: unknown metric %q", s, t.Metric)
	}
	if latency {
		d, err := time.ParseDuration(val)
		if err != nil {
			return t, fmt.Errorf("threshold %q: %s needs a duration such as 200ms, got %q", s, t.Metric, val)
		}
		t.Value = float64(d) / 1e6
		return t, nil
	}
	if v, ok := strings.CutSuffix(val, "%"); ok {
		if t.Metric == "rate" {
			return t, fmt.Errorf("threshold %q: rate takes a number of samples per second, not a percentage", s)
		}
		val, t.Percent = v, true
	}
	v, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return t, fmt.Errorf("threshold %q: bad value %q", s, val)
	}
	t.Value = v
	if (t.Label != "") && (t.Metric == "late" || t.Metric == "dropped") {
		return t, fmt.Errorf("threshold %q: late and dropped are counted for the whole run, not per label", s)
	}
	return t, nil
}

// Measure returns the metric's value in r (ms for latency).
func (t Threshold) Measure(r *Result) (float64, error) {
	row, ok := r.Row(t.Label)
	if !ok {
		var labels []string
		for _, l := range r.Summary.Labels {
			labels = append(labels, strconv.Quote(l.Label))
		}
		return 0, fmt.Errorf("threshold %q: no label %q (labels: %s)", t.Expr, t.Label, strings.Join(labels, ", "))
	}
	h := r.Latency(t.Label)
	metric := t.Metric
	if m, ok := strings.CutPrefix(metric, "svc."); ok {
		metric, h = m, r.Service(t.Label)
	}
	pct := func(n int64) float64 {
		if t.Percent {
			if row.Samples == 0 {
				return 0
			}
			return 100 * float64(n) / float64(row.Samples)
		}
		return float64(n)
	}
	switch metric {
	case "errors":
		return pct(row.Errors), nil
	case "rate":
		return row.Throughput, nil
	case "late":
		return pct(r.Summary.Late), nil
	case "dropped":
		return pct(r.Summary.Dropped), nil
	}
	if h == nil || h.TotalCount() == 0 {
		return 0, nil
	}
	switch metric {
	case "mean", "avg":
		return h.Mean() / 1e6, nil
	case "min":
		return float64(h.Min()) / 1e6, nil
	case "max":
		return float64(h.Max()) / 1e6, nil
	case "med":
		return float64(h.ValueAtQuantile(50)) / 1e6, nil
	}
	q, _ := strconv.ParseFloat(metric[1:], 64)
	return float64(h.ValueAtQuantile(q)) / 1e6, nil
}

// Crossed reports whether the threshold fails on r, with the measured value.
func (t Threshold) Crossed(r *Result) (bool, float64, error) {
	v, err := t.Measure(r)
	if err != nil {
		return false, 0, err
	}
	switch t.Op {
	case "<":
		return v < t.Value, v, nil
	case "<=":
		return v <= t.Value, v, nil
	case ">":
		return v > t.Value, v, nil
	default:
		return v >= t.Value, v, nil
	}
}
