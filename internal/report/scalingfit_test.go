package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/scaling"
)

// fitRun is a synthetic run of a plan with cores 1, 2, 4 and 8, an
// objective and a sizing load: two stacks' capacities over two starts,
// each start's bracket 1% either side of a figure on the law's curve
// (go-stdlib σ 0.05, κ 0.002 from 20,000/s; java-helidon σ 0.01,
// κ 0.0005 from 12,000/s, which passes go-stdlib at about 14 cores),
// off the curve by a share that differs from start to start.
func fitRun(t *testing.T) *Results {
	t.Helper()
	const plan = `{"name": "cores-fit", "implementations": [{"service": "go-stdlib"}, {"service": "java-helidon"}],
		"workloads": [{"name": "string"}], "cores": [1, 2, 4, 8], "load": {"model": "open", "levels": [1000]},
		"sizing": {"rate": 100000},
		"placement": {"service_cpus": "0-7", "generator_cpus": "8-15", "database_cpus": "8-15"}}`
	r := &results.Run{Version: 1, Command: "showdown run plans/cores-fit.yaml"}
	if err := json.Unmarshal([]byte(plan), &r.Plan); err != nil {
		t.Fatal(err)
	}
	law := map[string][3]float64{"go-stdlib": {20_000, 0.05, 0.002}, "java-helidon": {12_000, 0.01, 0.0005}}
	// Each start's share off the curve, by core count (1, 2, 4, 8).
	off := [2][4]float64{{0.02, -0.01, 0.015, -0.02}, {-0.015, 0.02, -0.01, 0.01}}
	counts := map[int]int{1: 0, 2: 1, 4: 2, 8: 3}
	for _, im := range r.Plan.Arms() {
		p := law[im.BaseID()]
		n := float64(im.Cores)
		x := p[0] * n / (1 + p[1]*(n-1) + p[2]*n*(n-1))
		c := &results.Capacity{Workload: "string", Arm: im.ID(), Implementation: im.BaseID(), Cores: im.Cores,
			Objective: "p99 ≤ 5ms, errors ≤ 0.1%", CPUs: n, Rate: x, Low: x * 0.98, High: x * 1.02}
		for s := range off {
			mid := x * (1 + off[s][counts[im.Cores]])
			c.Brackets = append(c.Brackets, results.Bracket{Start: s + 1, Pass: mid * 0.99, Fail: mid * 1.01})
		}
		r.Capacities = append(r.Capacities, c)
	}
	return &Results{Path: "synthetic", Kind: KindRun, Run: r, details: map[*results.LevelRun]*results.Level{}}
}

// TestScalingFitText checks the law's lines below the cores table
// against a golden file, and what they must say.
func TestScalingFitText(t *testing.T) {
	s := Summarize(fitRun(t))
	wl := s.Workloads[0]
	var md bytes.Buffer
	writeScalingFit(&md, wl)
	text := md.String()
	for _, want := range []string{
		// Both fitted with intervals from two starts (8 figures, 5 df).
		"- go-stdlib: λ 2", "8 figures from 2 starts at 4 counts; scatter",
		// go-stdlib's peak (21.8 on its curve) lies far past 8 cores.
		"beyond the 8 measured",
		// The crossing near 14 cores, with its interval.
		"java-helidon passes go-stdlib at about 1",
		// Sizing for the plan's 100,000 req/s.
		"Sizing for 100000 req/s at the objective: go-stdlib needs about",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the fit's lines lack %q:\n%s", want, text)
		}
	}
	golden(t, "cores-fit.golden.md", md.Bytes())
	// The whole summary carries them, after the cores table.
	var all bytes.Buffer
	if err := WriteMarkdown(&all, fitRun(t)); err != nil {
		t.Fatal(err)
	}
	if i, j := strings.Index(all.String(), "Scaling with cores"), strings.Index(all.String(), fitHead); i < 0 || j < i {
		t.Errorf("summary.md: the cores table at %d, the fit at %d; want the fit below the table", i, j)
	}
}

// TestFitLine checks what one stack's line says, on the lent machine's
// figures of 2026-11-26 (bench/README.md "Cores": one start, three
// counts, no rounds).
func TestFitLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		figs map[int]float64
		want []string
	}{
		// Three figures for three parameters: the parameters and the
		// peak, and no interval, said why.
		{"rust-axum", map[int]float64{1: 80_851, 2: 156_237, 4: 277_840}, []string{
			"rust-axum: λ 80851/s, σ 0.0153, κ 0.00984; peak at N* ≈ 10 cores, beyond the 4 measured; at 8 cores ",
			"an exact fit with no scatter to judge by: no interval",
		}},
		// Two starts that agree on a dip at 2 cores: fitted, and doubted.
		{"dip", map[int]float64{1: 1000, 2: 1450, 4: 3100, 8: 5200}, []string{"The law fits these figures poorly", "lack of fit, p = "}},
		// It gains per core from 2 to 4: outside the law.
		{"go-stdlib", map[int]float64{1: 44_880, 2: 65_285, 4: 140_255}, []string{
			"go-stdlib: outside the law, not forced into it: κ = -0.141 < 0",
			"no peak, prediction, crossing or size is drawn from them",
		}},
	} {
		var pts []scaling.Point
		for i, n := range []int{1, 2, 4, 8} {
			v, ok := tt.figs[n]
			switch {
			case !ok:
			case len(tt.figs) == 3:
				pts = append(pts, scaling.Point{Cores: n, Start: 1, Figure: v})
			default:
				// Two starts, 1% either side, swapping sides by count.
				off := 0.01 * float64(1-2*(i%2))
				pts = append(pts, scaling.Point{Cores: n, Start: 1, Figure: v * (1 + off)}, scaling.Point{Cores: n, Start: 2, Figure: v * (1 - off)})
			}
		}
		f, err := scaling.New(tt.name, pts)
		if err != nil {
			t.Fatal(err)
		}
		got := fitLine(f)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: got %q, want it to say %q", tt.name, got, w)
			}
		}
		t.Log(got)
	}
}

// TestFitFromRounds: from interleaved rounds each start's figure is the
// mean of its rounds, one observation per start and count.
func TestFitFromRounds(t *testing.T) {
	c := &results.Comparison{Workload: "string", Level: 512, Model: "closed", Arms: []string{"go-stdlib@1", "go-stdlib@2", "go-stdlib@4"}}
	law := map[string]float64{"go-stdlib@1": 1, "go-stdlib@2": 1.9, "go-stdlib@4": 3.4}
	for s := 1; s <= 2; s++ {
		for r := 1; r <= 4; r++ {
			round := results.Round{Start: s, Index: r}
			for i, arm := range c.Arms {
				wobble := 1 + 0.01*float64((r+i+s)%3-1)
				round.Arms = append(round.Arms, results.ArmRound{Arm: arm, Throughput: 50e3 * law[arm] * wobble})
			}
			c.Rounds = append(c.Rounds, round)
		}
	}
	wl := &Workload{Name: "string", Comparisons: []*results.Comparison{c}}
	r := &results.Run{}
	if err := json.Unmarshal([]byte(`{"name": "c", "implementations": [{"service": "go-stdlib"}], "workloads": [{"name": "string"}], "cores": [1, 2, 4], "load": {"levels": [512]}}`), &r.Plan); err != nil {
		t.Fatal(err)
	}
	wl.Scaling = scalingRows(r, wl)
	got := scalingFit(r, wl)
	if len(got) != 1 || !strings.HasPrefix(got[0], "go-stdlib: λ 5") || !strings.Contains(got[0], "6 figures from 2 starts at 3 counts; scatter") {
		t.Errorf("got %q, want go-stdlib fitted to 6 figures from 2 starts", got)
	}
}
