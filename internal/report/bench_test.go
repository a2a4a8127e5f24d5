package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// writeSyntheticRun writes a results folder of impls x workloads x levels
// x trials level runs of secs seconds each: run.json, and per level
// summary.json, timeseries.csv (with the lab's resource columns) and
// latency.hlog with one histogram per second.
func writeSyntheticRun(tb testing.TB, dir string, impls, workloads, levels, trials, secs int) {
	tb.Helper()
	rng := rand.New(rand.NewSource(1))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &plan.Plan{Name: "synthetic", Trials: trials, Load: plan.Load{Model: "closed", Duration: plan.Duration(time.Duration(secs) * time.Second)}}
	for i := 0; i < impls; i++ {
		p.Implementations = append(p.Implementations, plan.Implementation{Service: fmt.Sprintf("impl-%d", i)})
	}
	for w := 0; w < workloads; w++ {
		p.Workloads = append(p.Workloads, plan.Workload{Name: fmt.Sprintf("workload-%d", w)})
	}
	for l := 0; l < levels; l++ {
		p.Load.Levels = append(p.Load.Levels, 1<<(2*l))
	}
	r := &results.Run{Version: 1, Plan: p, Start: start, End: start.Add(time.Hour), Command: "showdown run synthetic.yaml"}
	for _, wl := range p.Workloads {
		for _, im := range p.Implementations {
			for t := 1; t <= trials; t++ {
				sr := &results.ServiceRun{Implementation: im.ID(), Service: im.Service, Workload: wl.Name, Trial: t, Status: results.OK,
					Dir: filepath.Join("runs", wl.Name, im.ID(), "trial-"+strconv.Itoa(t)), StartupSeconds: 0.5, ArtifactBytes: 10 << 20}
				for _, level := range p.Load.Levels {
					lr := &results.LevelRun{Level: level, Status: results.OK, Dir: filepath.Join(sr.Dir, "level-"+strconv.Itoa(level))}
					total := load.NewHistogram()
					ld := filepath.Join(dir, lr.Dir)
					if err := os.MkdirAll(ld, 0o755); err != nil {
						tb.Fatal(err)
					}
					var ts bytes.Buffer
					cw := csv.NewWriter(&ts)
					cw.Write(append(append([]string{}, load.TimeseriesHeader...), results.ResourceColumns...))
					var hlog strings.Builder
					hlog.WriteString("#[synthetic]\n\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n")
					for s := 0; s < secs; s++ {
						h := load.NewHistogram()
						n := 1000 + rng.Intn(200)
						for k := 0; k < n; k++ {
							h.RecordValue(int64(200e3 + rng.ExpFloat64()*float64(level)*100e3))
						}
						total.Merge(h)
						b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
						if err != nil {
							tb.Fatal(err)
						}
						fmt.Fprintf(&hlog, "Tag=total,%d.000,1.000,%.3f,%s\n", s, float64(h.Max())/1e6, b)
						f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
						cw.Write([]string{strconv.Itoa(s), strconv.Itoa(n), "0", strconv.Itoa(n),
							f(float64(h.ValueAtQuantile(50)) / 1e6), f(float64(h.ValueAtQuantile(90)) / 1e6), f(float64(h.ValueAtQuantile(99)) / 1e6), f(float64(h.Max()) / 1e6),
							strconv.Itoa(level), f(40 + rng.Float64()*20), strconv.Itoa(20000 + s*10), "8", "30", "1000", "10", "100000", "30"})
					}
					cw.Flush()
					lr.Total = load.LabelStats{Label: "TOTAL", Tag: "total", Samples: total.TotalCount(), Throughput: float64(total.TotalCount()) / float64(secs), Latency: load.StatsOf(total)}
					lr.Service = results.Resources{CPUMean: 50, RSSPeakBytes: 30 << 20, ThreadsMax: 8, FDsMax: 30}
					sum := load.Summary{Version: 1, Model: "closed", Start: start, DurationSeconds: float64(secs), Users: level, Total: lr.Total}
					for name, content := range map[string]string{load.TimeseriesFile: ts.String(), load.LatencyLogFile: hlog.String()} {
						if err := os.WriteFile(filepath.Join(ld, name), []byte(content), 0o644); err != nil {
							tb.Fatal(err)
						}
					}
					b, _ := jsonMarshal(sum)
					if err := os.WriteFile(filepath.Join(ld, load.SummaryFile), b, 0o644); err != nil {
						tb.Fatal(err)
					}
					sr.Levels = append(sr.Levels, lr)
				}
				r.Services = append(r.Services, sr)
			}
		}
	}
	if err := results.WriteRun(dir, r); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkReport builds every output over 100 level runs of 60 s each
// (5 implementations x 2 workloads x 5 levels x 2 trials).
func BenchmarkReport(b *testing.B) {
	dir := b.TempDir()
	writeSyntheticRun(b, dir, 5, 2, 5, 2, 60)
	var size, mdSize int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		var h, md bytes.Buffer
		if err := WriteHTML(&h, res); err != nil {
			b.Fatal(err)
		}
		if err := WriteMarkdown(&md, res); err != nil {
			b.Fatal(err)
		}
		size, mdSize = h.Len(), md.Len()
	}
	b.ReportMetric(float64(size), "html-bytes")
	b.ReportMetric(float64(mdSize), "md-bytes")
}
