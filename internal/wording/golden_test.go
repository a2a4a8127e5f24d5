package wording

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/results"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGolden says one of each thing this package words, with numbers
// small and large, in testdata/words.golden: the progress lines, the
// printed verdict, summary.md and report.html take these words from
// here, so the file is how a number reads everywhere.
func TestGolden(t *testing.T) {
	sig := results.PairRatio{Better: "rust-axum", Worse: "java-helidon", Ratio: 1.2816, Low: 1.2511, High: 1.3202, Significant: true, Starts: 2, Rounds: 20}
	same := results.PairRatio{Better: "java-spring", Worse: "node-http", Ratio: 1.02, Low: 0.81, High: 1.28, Starts: 2, Rounds: 20}
	one := results.PairRatio{Better: "a", Worse: "b", Ratio: 2.01, Low: 1.9, High: 2.1, Significant: true, OneStart: true}
	v := &results.Verdict{Metric: "throughput", Ranking: []string{"rust-axum", "java-helidon", "node-http"},
		Pairs: []results.PairRatio{sig, same}, GeneratorBound: map[string]float64{"rust-axum": 84},
		AA:            &results.PairRatio{Better: "go-stdlib", Worse: "go-stdlib+aa", Ratio: 1.004, Low: 0.991, High: 1.017},
		BudgetSeconds: 720, Bought: 0.079, NeedSeconds: 2040, TookSeconds: 2175, SetupsSeconds: 1680, OverranStarts: 2,
		Unresolved: []string{"java-spring against node-http: ±22.7%, about 12 starts of 14 rounds would reach ±3%"}}
	c := &results.Comparison{Workload: "string", Level: 50, Model: "closed", Verdict: v, Rounds: make([]results.Round, 20)}
	caps := []*results.Capacity{
		{Arm: "go-stdlib", Workload: "string", Rate: 64121.4, Low: 60336.2, High: 67906.9},
		{Arm: "held", Rate: 30217, Low: 29577, High: 30900, Held: 29577, HeldSeconds: 30, Confirmations: []results.Probe{{Rate: 29577, Pass: true, Seconds: 30}}},
		{Arm: "stepped", Rate: 30217, Low: 29577, High: 30900, Held: 28098, HeldSeconds: 30, Confirmations: []results.Probe{{Rate: 29577, Seconds: 30}, {Rate: 28098, Pass: true, Seconds: 30}}},
		{Arm: "bisected", Rate: 21464, Low: 4655, High: 38274, SearchRate: 27745, Brackets: []results.Bracket{
			{Start: 1, Pass: 25931, Fail: 26296, Confirmed: true, Held: 22787, HeldSeconds: 30, HeldRuns: 2, HeldFailed: 23403},
			{Start: 2, Pass: 29173, Fail: 29578, Confirmed: true, Held: 20141, HeldSeconds: 30, HeldRuns: 2, HeldFailed: 21201}}},
		{Arm: "never", Rate: 30217, Low: 29577, High: 30900, Confirmations: []results.Probe{{Rate: 29577, Seconds: 30}, {Rate: 28098, Seconds: 30}}},
		{Arm: "slow", Rate: 42.25, Low: 40.5, High: 44.01},
		{Arm: "bound", Rate: 19062, Low: 19062, LowerBound: true, Reason: "generator late: send lateness p99 1.1 ms > 0.5 ms"},
		{Arm: "users", Unit: results.UnitUsers, Rate: 310, Low: 290, High: 330},
		{Arm: "none", Reason: "start 1 failed the objective at every rate it tried, down to 1.0 req/s"},
		{Arm: "unmeasured"},
	}
	cv := &results.CapacityVerdict{Workload: "string", Objective: "p99 ≤ 5ms", Verdict: results.Verdict{Metric: "capacity", Ranking: []string{"go-stdlib", "bound"},
		Pairs: []results.PairRatio{{Better: "go-stdlib", Worse: "bound", Ratio: 3.36, Low: 3.1, High: 3.6, Significant: true}}},
		LowerBounds: []string{"bound's capacity is a lower bound, at least 19062 req/s: generator late"}}
	sizes := []results.Size{
		{Cores: 1.52, Instances: 3, MemoryBytes: 100 << 20},
		{Cores: 0.31, Instances: 1, MemoryBytes: 12 << 20, LowerBound: true},
		{Instances: 2, MemoryBytes: 1000},
		{},
	}
	pr := results.Probe{Rate: 30217, Achieved: 30180.6, P50Ms: 0.41, P99Ms: 4.62, P999Ms: 11.3, ErrorRate: 0.0004, LatenessP99Ms: 0.12, ServiceCPU: 97.4, GeneratorCPU: 47.2, Pass: true}
	late := pr
	late.Pass, late.GeneratorLimited, late.Why = false, true, "generator late: send lateness p99 1.1 ms > 0.5 ms"
	round := results.Round{Start: 1, Index: 3, Arms: []results.ArmRound{{Arm: "rust-axum", Throughput: 21806.4, P99Ms: 3.5}, {Arm: "go-stdlib", Throughput: 84012, P99Ms: 1.25, Misbehaved: "stalled"}}}
	wu := &results.WarmupRun{Auto: true, Steady: true, Seconds: 51.4, Requests: 1234567, CV: 0.021, Drift: -0.004, CompilerCPU: []float64{3, 1, 0, 0, 0}}
	con := &results.Contract{Mode: "full", Passed: 41, Skipped: 2, Seconds: 3.46}

	// The four answers of a capacity search, each with the probes that
	// decided it (as internal/capacity's floor tests end them).
	floor := &results.HostFloor{Rate: 200, Seconds: 3, Samples: 600, LatenessP99Ms: 1.2, P50Ms: 0.15, P99Ms: 1.4, ServerCPU: 0}
	quiet := &results.HostFloor{Rate: 200, Seconds: 3, Samples: 600, LatenessP99Ms: 0.05, P50Ms: 0.1, P99Ms: 0.2, ServerCPU: 0}
	noisy := &results.HostFloor{Rate: 200, Seconds: 3, Samples: 600, LatenessP99Ms: 2.4, P50Ms: 0.9, P99Ms: 2.6, ServerCPU: 0}
	obj := "p99 ≤ 5ms, errors ≤ 0.1%"
	answers := []*results.Capacity{
		{Arm: "bracket", Objective: obj, Rate: 8007, Low: 7966.3, High: 8047.6, Answer: results.AnswerBracket, Floor: floor,
			Brackets: []results.Bracket{{Start: 1, Pass: 7966.3, Fail: 8047.6, Why: "p99 22ms > 5.0ms", Probes: 9}},
			Probes:   []results.Probe{{Start: 1, Rate: 7966.3, Pass: true, P99Ms: 1.67}, {Start: 1, Rate: 8047.6, P99Ms: 22, Why: "p99 22ms > 5.0ms"}}},
		{Arm: "generator", Objective: obj, Rate: 5934.1, Low: 5934.1, LowerBound: true, Reason: "generator late: send lateness p99 15ms > 0.50ms; p99 16ms > 5.0ms", Answer: results.AnswerGeneratorBound, Floor: quiet,
			Brackets: []results.Bracket{{Start: 1, Pass: 5934.1, Fail: 6015.4, GeneratorLimited: true, Why: "generator late: send lateness p99 15ms > 0.50ms; p99 16ms > 5.0ms", Probes: 9}},
			Probes:   []results.Probe{{Start: 1, Rate: 5934.1, Pass: true, P99Ms: 1.05}}},
		{Arm: "floor", Objective: obj, Reason: "start 1 failed the objective at every rate it tried, down to 104.0 req/s (p99 6.0ms > 5.0ms)", Answer: results.AnswerBelowFloor, Floor: noisy, AboveFloor: true, ResolvableMs: 7.8,
			Brackets: []results.Bracket{{Start: 1, Fail: 104.05, Why: "p99 6.0ms > 5.0ms", Stopped: "failed the objective at every rate down to 104.0 req/s, the search's lowest (1% of its first probe)", Probes: 8}}},
		{Arm: "errors", Objective: obj, Reason: "start 1 failed the objective at every rate it tried, down to 104.0 req/s (errors 5% > 0.1%)", Answer: results.AnswerServiceFailed, Floor: quiet,
			Brackets: []results.Bracket{{Start: 1, Fail: 104.05, Why: "errors 5% > 0.1%", Probes: 8}}},
	}
	hostLate := pr
	hostLate.Pass, hostLate.P99Ms, hostLate.LatenessP99Ms = false, 6.1, 2.6
	hostLate.Why = "p99 6.1ms > 5.0ms (send lateness p99 2.6ms, and 2.8ms at 5202.5 req/s: the host's, not the generator's)"

	var b strings.Builder
	line := func(s ...string) {
		for _, x := range s {
			b.WriteString(x + "\n")
		}
	}
	line("# Pair", Pair(sig, "throughput"), Pair(same, "throughput"), Pair(one, "p99 latency"))
	line("# Comparison")
	line(Comparison(c)...)
	line(Comparison(&results.Comparison{Workload: "bank", Level: 8, Model: "open"})...)
	line("# Ranking", Ranking(v))
	line("# Capacity")
	for _, cp := range caps {
		line(Capacity(cp))
	}
	line("# Amount", Amount(64121.4, results.UnitRate), Amount(42.25, results.UnitRate), Amount(3.456, results.UnitRate), Amount(310.4, results.UnitUsers))
	line("# CapacityVerdict")
	line(CapacityVerdict(cv)...)
	line("# Size")
	for _, sz := range sizes {
		line(Size(sz))
	}
	line(SizeLine(caps[0], sizes[0]))
	line("# Probe", Probe(pr, results.UnitRate), Probe(late, results.UnitRate))
	line("# Round", Round(round, "closed"), Round(round, "open"))
	line("# Warmup", Warmup(wu), Warmup(&results.WarmupRun{Seconds: 10, Requests: 5000}))
	line("# Contract", Contract(con))
	line("# HostFloor", HostFloor(floor), HostFloor(&results.HostFloor{Rate: 200, Seconds: 3, LatenessP99Ms: 2.4, P50Ms: 0.9, P99Ms: 2.6, ServerCPU: -1}))
	line("# Answer")
	for _, cp := range answers {
		line(Capacity(cp), Answer(cp))
		if w := FloorWarning(cp); w != "" {
			line(w)
		}
	}
	line(Answer(caps[0]))
	// Capacities held in every start: settled, too wide, one start of
	// two holding nothing, none held, and a held lower bound.
	br := func(start int, pass, fail, held float64) results.Bracket {
		b := results.Bracket{Start: start, Pass: pass, Fail: fail, Why: "p99 7.1ms > 5.0ms", Confirmed: true, Held: held, HeldSeconds: 30, HeldRuns: 2}
		if held == 0 {
			b.HeldSeconds, b.HeldRuns = 0, 0
		}
		return b
	}
	conf := func(start int, rates ...float64) []results.Probe {
		var out []results.Probe
		for i, r := range rates {
			out = append(out, results.Probe{Start: start, Rate: r, Seconds: 30, Pass: i == len(rates)-1})
		}
		return out
	}
	held := []*results.Capacity{
		{Arm: "settled", Objective: obj, Rate: 45990, Low: 44090, High: 47890, SearchRate: 51400, SearchLow: 45000, SearchHigh: 57800, Answer: results.AnswerBracket,
			Brackets:      []results.Bracket{br(1, 46386, 46900, 45840), br(2, 48040, 48500, 46140)},
			Confirmations: append(conf(1, 46386, 45840, 45840), conf(2, 48040, 46140, 46140)...)},
		{Arm: "wide", Objective: obj, Rate: 41500, Low: 9734, High: 73266, SearchRate: 51439, SearchLow: 0, SearchHigh: 111897, Answer: results.AnswerBracket,
			Brackets:      []results.Bracket{br(1, 46386, 46900, 39000), br(2, 55808, 56400, 44000)},
			Confirmations: append(conf(1, 46386, 44067, 39660, 39000, 39000), conf(2, 55808, 44000, 44000)...)},
		{Arm: "one-held", Objective: obj, Rate: 39000, Low: 39000, High: 39000, SearchRate: 51439, SearchLow: 0, SearchHigh: 111897, Answer: results.AnswerBracket,
			Brackets:      []results.Bracket{br(1, 46386, 46900, 39000), br(2, 55808, 56400, 0)},
			Confirmations: append(conf(1, 46386, 39000, 39000), results.Probe{Start: 2, Rate: 55808, Seconds: 30}, results.Probe{Start: 2, Rate: 28462, Seconds: 30})},
		{Arm: "none-held", Objective: obj, Reason: "no start held a rate in 2 sustained runs in a row, at its search's edge or in 5 steps below it (start 1)", SearchRate: 46643, SearchLow: 46386, SearchHigh: 46900, Answer: results.AnswerBracket,
			Brackets:      []results.Bracket{br(1, 46386, 46900, 0)},
			Confirmations: []results.Probe{{Start: 1, Rate: 46386, Seconds: 30}, {Start: 1, Rate: 23656, Seconds: 30}}},
		{Arm: "held-bound", Objective: obj, Rate: 17100, Low: 17100, LowerBound: true, Reason: "generator late: send lateness p99 1.1 ms > 0.5 ms", SearchRate: 19062, SearchLow: 19062, Answer: results.AnswerGeneratorBound,
			Brackets:      []results.Bracket{{Start: 1, Pass: 19062, Fail: 19500, GeneratorLimited: true, Why: "generator late: send lateness p99 1.1 ms > 0.5 ms", Confirmed: true, Held: 17100, HeldSeconds: 30, HeldRuns: 2}},
			Confirmations: conf(1, 19062, 18109, 17100, 17100)},
	}
	line("# Capacity held in every start")
	for _, cp := range held {
		line(Capacity(cp), Answer(cp))
	}
	addedV := *cv
	addedV.AddedStarts = 2
	addedV.Added = []string{"start 3, as go-stdlib on string: " + Unsettled(held[1]), "start 4, as go-stdlib on string: three starts held 39000, 44000 and 41200 req/s, an interval [34700, 48100] wider than ±25%"}
	line("# CapacityVerdict with added starts")
	line(CapacityVerdict(&addedV)...)
	line("# Probe on a host's lateness", Probe(hostLate, results.UnitRate))
	// The database-bound line: on a CPU of its own under every stack,
	// on two under one of them, and sharing the generator's.
	dbv := func(d *results.DatabaseCPUs, bound, with map[string]float64) *results.Verdict {
		return &results.Verdict{Metric: "throughput", Ranking: []string{"go-stdlib", "node-http"}, Database: d, DatabaseBound: bound, WithGenerator: with}
	}
	line("# DatabaseBound",
		DatabaseBound(dbv(&results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "1", Count: 1}, map[string]float64{"go-stdlib": 96, "node-http": 96}, nil)),
		DatabaseBound(dbv(&results.DatabaseCPUs{Engine: "MariaDB", CPUs: "2-3", Count: 2}, map[string]float64{"go-stdlib": 88}, nil)),
		DatabaseBound(dbv(&results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "1", Count: 1, WithGenerator: true}, map[string]float64{"go-stdlib": 61, "node-http": 58}, map[string]float64{"go-stdlib": 97, "node-http": 92})))
	line("# DatabaseNote",
		DatabaseNote(dbv(&results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "1", Count: 1}, map[string]float64{"go-stdlib": 96}, nil), "go-stdlib"),
		DatabaseNote(dbv(&results.DatabaseCPUs{Engine: "PostgreSQL", CPUs: "1", Count: 1, WithGenerator: true}, map[string]float64{"go-stdlib": 61}, map[string]float64{"go-stdlib": 97}), "go-stdlib"))

	path := filepath.Join("testdata", "words.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/wording -update writes it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("words differ from %s (go test ./internal/wording -update, then read the diff):\ngot:\n%s", path, got)
	}
}
