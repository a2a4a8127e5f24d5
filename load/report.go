package load

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteReport writes the aggregate table (the JMeter aggregate-report
// columns, latencies in ms), the run's facts, error reasons and warnings.
func WriteReport(w io.Writer, r *Result) {
	s := &r.Summary
	switch s.Model {
	case "open":
		fmt.Fprintf(w, "open model: target %.1f/s, achieved %.1f/s over %.1fs; late sends %d, dropped %d\n",
			s.TargetRate, s.AchievedRate, s.DurationSeconds, s.Late, s.Dropped)
		if s.Shape != "" {
			fmt.Fprintf(w, "traffic: %s; %d connections opened\n", s.Shape, s.ConnectionsOpened)
		}
		if s.Queued > 0 {
			fmt.Fprintf(w, "(%d sends waited for a free connection, every one in use: the service's time, in their latency, not in the send lateness)\n", s.Queued)
		}
	case "closed":
		fmt.Fprintf(w, "closed model: %d users, %.1f samples/s over %.1fs\n", s.Users, s.AchievedRate, s.DurationSeconds)
	}
	if s.Interrupted {
		fmt.Fprintln(w, "interrupted: partial results")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Label\tSamples\tAverage\tMedian\t90%\t95%\t99%\tMin\tMax\tError %\tThroughput/s\tReceived KB/s\tSent KB/s\t")
	rows := append([]LabelStats{}, s.Labels...)
	if len(rows) != 1 || rows[0].Samples != s.Total.Samples {
		rows = append(rows, s.Total)
	}
	for _, l := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f%%\t%.1f\t%.1f\t%.1f\t\n",
			l.Label, l.Samples, f3(l.Latency.Mean), f3(l.Latency.P50), f3(l.Latency.P90), f3(l.Latency.P95),
			f3(l.Latency.P99), f3(l.Latency.Min), f3(l.Latency.Max), l.ErrorPercent, l.Throughput, l.ReceivedKBps, l.SentKBps)
	}
	tw.Flush()
	from := "the actual send (closed model)"
	if s.Model == "open" {
		from = "the intended send time (open model)"
	}
	fmt.Fprintf(w, "(latency in ms from %s; service time p50/p99: %s/%s ms)\n", from, f3(s.Total.Service.P50), f3(s.Total.Service.P99))
	if s.Model == "open" && s.Lateness != (Stats{}) {
		fmt.Fprintf(w, "(send lateness, the generator's own share of that latency, p50/p99/max: %s/%s/%s ms)\n",
			f3(s.Lateness.P50), f3(s.Lateness.P99), f3(s.Lateness.Max))
	}
	if s.Total.Errors > 0 {
		fmt.Fprintln(w, "Errors:")
		for _, l := range s.Labels {
			for _, rc := range l.Reasons {
				fmt.Fprintf(w, "  %-24s %8d  %s\n", l.Label, rc.Count, rc.Reason)
			}
		}
	}
	util := 0.0
	if s.DurationSeconds > 0 && s.CPUs > 0 {
		util = 100 * s.CPUSeconds / (s.DurationSeconds * float64(s.CPUs))
	}
	perReq := 0.0
	if s.Total.Samples > 0 {
		perReq = 1e6 * s.CPUSeconds / float64(s.Total.Samples)
	}
	fmt.Fprintf(w, "generator CPU: %.2fs (%.0f%% of %d CPU(s), %.1f µs/request)\n", s.CPUSeconds, util, s.CPUs, perReq)
	for _, warn := range s.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
}

func f3(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// WriteSpectrum writes a wrk2-style latency distribution and detailed
// percentile spectrum of a label ("" for the total).
func WriteSpectrum(w io.Writer, r *Result, label string) {
	h := r.Latency(label)
	name := label
	if name == "" {
		name = "all labels"
	}
	fmt.Fprintf(w, "Latency distribution (HdrHistogram, %s, corrected for coordinated omission):\n", name)
	if h == nil || h.TotalCount() == 0 {
		fmt.Fprintln(w, "  (no samples)")
		return
	}
	for _, q := range []float64{50, 75, 90, 99, 99.9, 99.99, 99.999, 100} {
		fmt.Fprintf(w, " %7.3f%% %10.3fms\n", q, float64(h.ValueAtQuantile(q))/1e6)
	}
	fmt.Fprintln(w, "Detailed percentile spectrum:")
	fmt.Fprintf(w, "%12s %14s %10s %14s\n", "Value(ms)", "Percentile", "TotalCount", "1/(1-Percentile)")
	for _, b := range h.CumulativeDistribution() {
		inv := "inf"
		if b.Quantile < 100 {
			inv = fmt.Sprintf("%.2f", 1/(1-b.Quantile/100))
		}
		fmt.Fprintf(w, "%12.3f %14.12f %10d %14s\n", float64(b.ValueAt)/1e6, b.Quantile/100, b.Count, inv)
	}
	fmt.Fprintf(w, "#[Mean = %.3f, StdDeviation = %.3f]\n#[Max = %.3f, Total count = %d]\n",
		h.Mean()/1e6, h.StdDev()/1e6, float64(h.Max())/1e6, h.TotalCount())
}
