package report

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

func TestScalingEfficiency(t *testing.T) {
	for _, tt := range []struct {
		name      string
		fig       float64
		cores     int
		base      float64
		baseCores int
		want      float64
	}{
		// go-stdlib on the 16-CPU machine: 64k at 1, 330k at 8 (5.2x).
		{"go 8 cores", 330_000, 8, 64_000, 1, 330_000.0 / 512_000},
		// Linear.
		{"linear", 40_000, 4, 10_000, 1, 1},
		// Against two cores when one was not measured.
		{"against 2", 30_000, 4, 20_000, 2, 0.75},
		// The base itself.
		{"base", 64_000, 1, 64_000, 1, 1},
	} {
		if got := scalingEfficiency(tt.fig, tt.cores, tt.base, tt.baseCores); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := scalingEfficiency(1, 2, 0, 1); !math.IsNaN(got) {
		t.Errorf("no base: got %v, want NaN", got)
	}
}

func TestCrossings(t *testing.T) {
	rows := func(im string, figs map[int]float64) []ScalingRow {
		var out []ScalingRow
		for _, n := range []int{1, 2, 4, 8} {
			if f, ok := figs[n]; ok {
				out = append(out, ScalingRow{Implementation: im, Cores: n, Figure: f})
			}
		}
		return out
	}
	for _, tt := range []struct {
		name string
		rows []ScalingRow
		want []Crossing
	}{
		// The source's finding: Go ahead on 2 cores, the JVM ahead on
		// many; the gap 4k at 2 and -4k at 4 crosses at 3.
		{"between measured", append(rows("go", map[int]float64{1: 10e3, 2: 18e3, 4: 30e3}), rows("java", map[int]float64{1: 6e3, 2: 14e3, 4: 34e3})...),
			[]Crossing{{Passer: "java", Passed: "go", Low: 2, High: 4, At: 3}}},
		// Never crossing, the gap growing: nothing.
		{"apart", append(rows("rust", map[int]float64{1: 128e3, 2: 219e3, 4: 404e3}), rows("go", map[int]float64{1: 64e3, 2: 97e3, 4: 188e3})...),
			nil},
		// The gap closing past the top count: 8k at 2, 4k at 4, so 0 at
		// 6 on the trend, flagged as extrapolated.
		{"extrapolated", append(rows("go", map[int]float64{2: 20e3, 4: 30e3}), rows("java", map[int]float64{2: 12e3, 4: 26e3})...),
			[]Crossing{{Passer: "java", Passed: "go", Low: 2, High: 4, At: 6, Extrapolated: true}}},
		// Closing too slowly to cross within four times the top count:
		// 10k at 2, 9k at 4 would cross at 22 > 16.
		{"too far", append(rows("go", map[int]float64{2: 20e3, 4: 30e3}), rows("java", map[int]float64{2: 10e3, 4: 21e3})...),
			nil},
		// Crossing twice between measured counts, then level.
		{"twice", append(rows("a", map[int]float64{1: 10, 2: 20, 4: 30, 8: 50}), rows("b", map[int]float64{1: 12, 2: 18, 4: 32, 8: 52})...),
			[]Crossing{{Passer: "a", Passed: "b", Low: 1, High: 2, At: 1.5}, {Passer: "b", Passed: "a", Low: 2, High: 4, At: 3}}},
		// Only one common core count: no trend to extrapolate.
		{"one count", append(rows("a", map[int]float64{1: 10}), rows("b", map[int]float64{1: 12, 2: 18})...), nil},
	} {
		got := crossings(tt.rows)
		for i := range got {
			got[i].At = math.Round(got[i].At*1e9) / 1e9
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
	c := Crossing{Passer: "java", Passed: "go", Low: 2, High: 4, At: 6, Extrapolated: true}
	if got := c.String(); !strings.HasPrefix(got, "extrapolated, not measured: ") || !strings.Contains(got, "about 6 cores") {
		t.Errorf("String: %q", got)
	}
}

func TestFillEfficiency(t *testing.T) {
	rows := []ScalingRow{
		{Implementation: "go", Cores: 2, Figure: 97e3},
		{Implementation: "go", Cores: 1, Figure: 64e3},
		{Implementation: "rust", Cores: 2, Figure: 200e3},
		{Implementation: "rust", Cores: 4, Figure: 300e3},
	}
	fillEfficiency(rows)
	// go against its one core; rust, not measured at one, against two.
	for i, want := range []struct {
		perCore, eff float64
		base         int
	}{{48.5e3, 97.0 / 128, 1}, {64e3, 1, 1}, {100e3, 1, 2}, {75e3, 0.75, 2}} {
		r := rows[i]
		if r.PerCore != want.perCore || math.Abs(r.Efficiency-want.eff) > 1e-12 || r.BaseCores != want.base {
			t.Errorf("row %d: got per core %v, efficiency %v, base %d; want %+v", i, r.PerCore, r.Efficiency, r.BaseCores, want)
		}
	}
}

// coresRun is a synthetic run of a plan with cores and an objective: two
// stacks at 1, 2 and 4 cores, each arm's capacity search with its probes.
func coresRun(t *testing.T) *Results {
	t.Helper()
	const plan = `{"name": "cores", "implementations": [{"service": "go-stdlib"}, {"service": "java-helidon"}],
		"workloads": [{"name": "string"}], "cores": [1, 2, 4], "load": {"model": "open", "levels": [1000]},
		"placement": {"service_cpus": "0-3", "generator_cpus": "4-11", "database_cpus": "4-11"}}`
	r := &results.Run{Version: 1, Command: "showdown run plans/cores.yaml"}
	if err := json.Unmarshal([]byte(plan), &r.Plan); err != nil {
		t.Fatal(err)
	}
	caps := map[string]float64{"go-stdlib@1": 10e3, "go-stdlib@2": 18e3, "go-stdlib@4": 30e3,
		"java-helidon@1": 6e3, "java-helidon@2": 14e3, "java-helidon@4": 34e3}
	for _, im := range r.Plan.Arms() {
		capacity := caps[im.ID()]
		c := &results.Capacity{Workload: "string", Arm: im.ID(), Implementation: im.BaseID(), Cores: im.Cores,
			Objective: "p99 ≤ 5ms, errors ≤ 0.1%", CPUs: float64(im.Cores), Rate: capacity, Low: capacity * 0.98, High: capacity * 1.02,
			Failed: capacity * 1.04, FailedWhy: "p99 9.1 ms > 5 ms"}
		// Bracketing from a quarter of the capacity, then bisecting; the
		// capacity's own rate probed twice (two starts).
		for i, f := range []float64{0.25, 0.5, 1, 1.04, 1} {
			rate := capacity * f
			p99 := 0.4 + 4.5*math.Pow(f, 8)
			if f > 1 {
				p99 = 9.1
			}
			c.Probes = append(c.Probes, results.Probe{Start: 1 + i/4, Rate: rate, Achieved: rate * math.Min(1, 1.02-0.02*f), Seconds: 5,
				Samples: int64(rate * 5), P50Ms: 0.2 + p99/10, P99Ms: p99 + 0.1*float64(i/4), P999Ms: 1.6 * p99, Pass: f <= 1})
		}
		if im.ID() == "java-helidon@4" {
			c.LowerBound, c.Reason = true, "the generator used 84% of its CPUs at 35,360 req/s"
		}
		r.Capacities = append(r.Capacities, c)
	}
	return &Results{Path: "synthetic", Kind: KindRun, Run: r, details: map[*results.LevelRun]*results.Level{}}
}

func TestCoresReport(t *testing.T) {
	res := coresRun(t)
	s := Summarize(res)
	wl := s.Workloads[0]
	if len(wl.Scaling) != 6 {
		t.Fatalf("scaling rows: got %d, want 6", len(wl.Scaling))
	}
	if r := wl.Scaling[2]; r.Arm != "go-stdlib@4" || r.Metric != "capacity" || r.PerCore != 7500 || r.Efficiency != 0.75 {
		t.Errorf("go-stdlib@4: %+v", r)
	}
	// java-helidon@4's capacity is a lower bound, at least 33,320 (its
	// Low): the gap 4000 at 2 cores, -3320 at 4; the crossing says so.
	if len(wl.Crossings) != 1 || wl.Crossings[0].Passer != "java-helidon" || math.Abs(wl.Crossings[0].At-(2+2*4000.0/7320)) > 1e-9 || !wl.Crossings[0].LowerBound {
		t.Errorf("crossings: %+v", wl.Crossings)
	}
	if len(wl.Curves) != 6 || len(wl.Curves[0].Points) != 4 || wl.Curves[0].Points[2].N != 2 {
		t.Fatalf("curves: %+v", wl.Curves)
	}
	var md, h bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	golden(t, "cores.golden.md", md.Bytes())
	if err := WriteHTML(&h, res); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	// The curve is the main chart: every arm's three percentiles, the
	// objective and each capacity drawn.
	for _, want := range []string{`id="w0-curve"`, "go-stdlib@1 p50", "go-stdlib@1 p99", "go-stdlib@1 p99.9", "objective p99 ≤ 5", "java-helidon@4 capacity 33320/s (a lower bound", `id="w0-cores"`, "java-helidon passes go-stdlib between 2 and 4 cores"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// One level: the one-dot-per-arm charts are gone.
	if strings.Contains(page, `id="w0-l0"`) {
		t.Error("report.html still has the throughput-per-level chart of one level")
	}
	golden(t, "cores.golden.html", h.Bytes())
}

func TestObjectiveBounds(t *testing.T) {
	for obj, want := range map[string][]bound{
		"p99 <= 10ms, errors <= 0.1%": {{"p99", 10}},
		"p99 <= 5ms, p99.9 <= 50ms":   {{"p99", 5}, {"p99.9", 50}},
		"p50 <= 0.5s":                 {{"p50", 500}},
		"p99 <= 800us":                {{"p99", 0.8}},
		"errors <= 1%":                nil,
	} {
		if got := objectiveBounds(obj); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %v, want %v", obj, got, want)
		}
	}
}

func TestProbePoints(t *testing.T) {
	ps := []results.Probe{
		{Rate: 2000, Achieved: 2000, P50Ms: 1, P99Ms: 3, P999Ms: 5},
		{Rate: 1000, Achieved: 1000, P50Ms: 1, P99Ms: 2, P999Ms: 4},
		{Rate: 2000, Achieved: 1990, P50Ms: 1, P99Ms: 5, P999Ms: 9},
		{Rate: 2000, Achieved: 1980, P50Ms: 1, P99Ms: 4, P999Ms: 7},
	}
	got := probePoints(ps)
	// In rate order; the three probes at 2,000 as their medians.
	want := []CurvePoint{{Offered: 1000, Achieved: 1000, P50Ms: 1, P99Ms: 2, P999Ms: 4, N: 1}, {Offered: 2000, Achieved: 1990, P50Ms: 1, P99Ms: 4, P999Ms: 7, N: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestRoundEfficiency: from interleaved rounds the figure is the mean of
// the arm's rounds and the efficiency the paired ratio to the one-core
// arm, round by round, with its interval; a drift that moves both arms
// alike cancels.
func TestRoundEfficiency(t *testing.T) {
	c := &results.Comparison{Workload: "string", Level: 512, Model: "closed", Arms: []string{"go-stdlib@1", "go-stdlib@2"}}
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 5; r++ {
			drift := 1 + 0.1*float64(r) // the machine slows down, both alike
			two := 1.8 + 0.01*float64(r%2) - 0.005*float64(s)
			c.Rounds = append(c.Rounds, results.Round{Start: s, Index: r, Arms: []results.ArmRound{
				{Arm: "go-stdlib@1", Throughput: 100e3 / drift}, {Arm: "go-stdlib@2", Throughput: two * 100e3 / drift}}})
		}
	}
	// A misbehaved round is left out.
	c.Rounds[0].Arms[1].Misbehaved = "answered 3 errors in the second after its thaw"
	wl := &Workload{Name: "string", Comparisons: []*results.Comparison{c}}
	r := &results.Run{}
	if err := json.Unmarshal([]byte(`{"name": "c", "implementations": [{"service": "go-stdlib"}], "workloads": [{"name": "string"}], "cores": [1, 2], "load": {"levels": [512]}}`), &r.Plan); err != nil {
		t.Fatal(err)
	}
	rows := scalingRows(r, wl)
	if len(rows) != 2 || rows[0].Source != "rounds" || rows[1].Level != 512 {
		t.Fatalf("rows: %+v", rows)
	}
	two := rows[1]
	if two.Efficiency < 0.89 || two.Efficiency > 0.91 || !(two.EfficiencyLow < two.Efficiency && two.Efficiency < two.EfficiencyHigh) || two.EfficiencyHigh-two.EfficiencyLow > 0.05 {
		t.Errorf("go-stdlib@2: efficiency %v [%v, %v], want about 0.9 with a narrow interval", two.Efficiency, two.EfficiencyLow, two.EfficiencyHigh)
	}
	if got := efficiencyText(two); !strings.Contains(got, "90% [") {
		t.Errorf("efficiencyText: %q", got)
	}
}
