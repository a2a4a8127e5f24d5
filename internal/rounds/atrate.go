package rounds

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
	"github.com/showdownlab/showdown/workloads"
)

// The limits of a comparison at one rate (results.Comparison.AtRate).
const (
	// CarryShare is the share of the rate an arm must serve on the mean
	// of its rounds: below it requests queued up, and the arm could not
	// carry the rate.
	CarryShare = 0.95
	// CarryErrors is the share of errors above which an arm could not
	// carry the rate.
	CarryErrors = 0.01
	// FloorShare is the share of the best arm's p99 that the generator's
	// send lateness may reach before the verdict says the p99s measure
	// the host as much as the services.
	FloorShare = 1.0 / 3
)

// cpuPerRequest is an arm round's service CPU per request, in µs: its
// CPU seconds over its requests, or, in runs that did not record the
// seconds, its CPU share over the interval.
func cpuPerRequest(a results.ArmRound) float64 {
	if a.Samples == 0 {
		return 0
	}
	if a.ServiceCPUSeconds > 0 {
		return a.ServiceCPUSeconds / float64(a.Samples) * 1e6
	}
	if a.ServiceCPU <= 0 {
		return 0
	}
	return a.ServiceCPU / 100 * a.Seconds / float64(a.Samples) * 1e6
}

// kept lists, per arm, the rounds the verdict keeps (not misbehaved, and
// not disturbed unless the machine was that busy throughout).
func kept(c *results.Comparison) map[string][]results.ArmRound {
	out := map[string][]results.ArmRound{}
	for _, r := range c.Rounds {
		for _, a := range r.Arms {
			if why, busy := disturbed(c, a, r.Start); a.Misbehaved == "" && (why == "" || busy) {
				out[a.Arm] = append(out[a.Arm], a)
			}
		}
	}
	return out
}

// geo is the geometric mean of the positive values that pick gives (0
// for none: a record's figure not taken).
func geo(rs []results.ArmRound, pick func(results.ArmRound) float64) float64 {
	xs := make([]float64, len(rs))
	for i, a := range rs {
		xs[i] = pick(a)
	}
	return orZero(stats.GeoMean(xs))
}

// orZero is x, or 0 for NaN (none): records say "not taken" with 0.
func orZero(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// armFigures are each arm's figures over its kept rounds, in c.Arms's
// order.
func armFigures(c *results.Comparison, k map[string][]results.ArmRound) []results.ArmFigures {
	var out []results.ArmFigures
	for _, arm := range c.Arms {
		rs := k[arm]
		if len(rs) == 0 {
			continue
		}
		f := results.ArmFigures{Arm: arm, Rounds: len(rs),
			Throughput:    geo(rs, func(a results.ArmRound) float64 { return a.Throughput }),
			P50Ms:         geo(rs, func(a results.ArmRound) float64 { return a.P50Ms }),
			P99Ms:         geo(rs, func(a results.ArmRound) float64 { return a.P99Ms }),
			CPUPerRequest: geo(rs, cpuPerRequest)}
		starts := map[int][]results.ArmRound{}
		for _, r := range c.Rounds {
			for _, a := range r.Arms {
				if a.Arm == arm && slices.Contains(rs, a) {
					starts[r.Start] = append(starts[r.Start], a)
				}
			}
		}
		for _, srs := range starts {
			if g := geo(srs, cpuPerRequest); g > 0 {
				if f.CPULow == 0 || g < f.CPULow {
					f.CPULow = g
				}
				f.CPUHigh = max(f.CPUHigh, g)
			}
		}
		var all []float64
		byStart := map[int][]float64{}
		for _, r := range c.Rounds {
			for _, a := range r.Arms {
				if a.Arm == arm && a.RSSBytes > 0 && a.Misbehaved == "" {
					all = append(all, float64(a.RSSBytes))
					byStart[r.Start] = append(byStart[r.Start], float64(a.RSSBytes))
				}
			}
		}
		if len(all) > 0 {
			f.RSSBytes = uint64(stats.Median(all))
			lo, hi := math.Inf(1), 0.0
			for _, v := range byStart {
				m := stats.Median(v)
				lo, hi = min(lo, m), max(hi, m)
			}
			f.RSSLow, f.RSSHigh = uint64(lo), uint64(hi)
		}
		out = append(out, f)
	}
	return out
}

// overloaded names the arms of a comparison at a rate that could not
// carry it, with why: more than CarryErrors of errors, more than
// CarryErrors of the sends waiting for a free connection (every one busy
// with the service's backlog), or a mean throughput under CarryShare of
// the rate while the generator sent on time (its send lateness p99 under
// half the arm's p99: a generator that fell behind, on a busy host, is
// not the service's shortfall, and the verdict's floor line says so).
func overloaded(c *results.Comparison, k map[string][]results.ArmRound) map[string]string {
	if !c.AtRate || c.Level <= 0 {
		return nil
	}
	out := map[string]string{}
	for _, arm := range c.Arms {
		rs := k[arm]
		if len(rs) == 0 {
			continue
		}
		var thr, late, p99 []float64
		var errs, samples, queued int64
		for _, a := range rs {
			thr = append(thr, a.Throughput)
			late, p99 = append(late, a.LatenessP99Ms), append(p99, a.P99Ms)
			errs += a.Errors
			samples += a.Samples
			queued += a.Queued
		}
		rate := float64(c.Level)
		switch m := stats.Mean(thr); {
		case samples > 0 && float64(errs) > CarryErrors*float64(samples):
			out[arm] = fmt.Sprintf("answered %.1f%% errors at %d req/s", 100*float64(errs)/float64(samples), c.Level)
		case !c.Contrast && samples > 0 && float64(queued) > CarryErrors*float64(samples):
			out[arm] = fmt.Sprintf("%.1f%% of the sends waited for a free connection: its backlog filled them all", 100*float64(queued)/float64(samples))
		case m < CarryShare*rate && stats.Median(late) < stats.Median(p99)/2:
			out[arm] = fmt.Sprintf("served %.0f req/s of the %d offered: its queue grew", m, c.Level)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// latenessFloor is the median of the kept rounds' send lateness p99: the
// generator's and the host's own floor under the comparison's p99s (0
// where the rounds did not record it).
func latenessFloor(k map[string][]results.ArmRound) float64 {
	var xs []float64
	for _, rs := range k {
		for _, a := range rs {
			if a.LatenessP99Ms > 0 {
				xs = append(xs, a.LatenessP99Ms)
			}
		}
	}
	return orZero(stats.Median(xs))
}

// The growth a minute above which a slope whose interval excludes 0 is
// a leak: a service that grows this fast under steady load runs out of
// its box within a day (1 GiB in about 17 hours).
const (
	LeakRSSPerMinute     = 1 << 20
	LeakThreadsPerMinute = 10
	LeakFDsPerMinute     = 10
	// LeakDBConnectionsPerMinute is lower than the others because a
	// healthy pool is flat once warm (it opens its connections under the
	// warm-up's load and reuses them) and small (DB_POOL_SIZE,
	// workloads.DefaultPoolSize unless a plan says otherwise): a service
	// that keeps opening 5 a minute outgrows a pool of 20 within a few
	// minutes and then takes the other arms' share of the server's
	// max_connections.
	LeakDBConnectionsPerMinute = 5
	// MinGrowthPoints is how many readings a slope needs, over all starts.
	MinGrowthPoints = 6
	// MinLaterPoints is how many readings the later half's slope needs
	// to mark a growth settling: two a start of two starts, as the main
	// job's four rounds a start give.
	MinLaterPoints = 4
)

// Growths checks every arm of c for a leak of RSS, threads, file
// descriptors and, on a workload with a database, the connections it
// holds to the database servers (none for an arm whose rounds never
// read one, as a run from before they were read): the slope of each over time within each start (one common
// slope, each start its own intercept, so a start that sits higher does
// not read as growth), with its 95% interval. A leak is a slope whose
// whole interval lies above the resource's limit (so it excludes 0 too):
// a runtime whose heap still settles after its warm-up (V8 grew 5.5 MiB
// a minute [2.9, 8.1] over half a minute of rounds on a busy host) is
// not called a leak on a point estimate. Nor is a growth that has
// stopped: when the slope over the later half of each start is at or
// below the limit, the growth is marked settling (java-spring's RSS at a
// busy rate grew 52 MiB a minute over its first minute and 0.5 over the
// next two, bench/rss-growth.sh), though the whole interval lies above.
func Growths(c *results.Comparison) []results.Growth {
	type resource struct {
		name  string
		limit float64
		pick  func(results.ArmRound) float64
	}
	var out []results.Growth
	for _, arm := range c.Arms {
		resources := []resource{
			{"rss", LeakRSSPerMinute, func(a results.ArmRound) float64 { return float64(a.RSSBytes) }},
			{"threads", LeakThreadsPerMinute, func(a results.ArmRound) float64 { return float64(a.Threads) }},
			{"fds", LeakFDsPerMinute, func(a results.ArmRound) float64 { return float64(a.FDs) }},
		}
		if workloads.Database(c.Workload) != workloads.NoDatabase && readConnections(c, arm) {
			resources = append(resources, resource{"db_connections", LeakDBConnectionsPerMinute, func(a results.ArmRound) float64 { return float64(a.DBConnections) }})
		}
		for _, res := range resources {
			starts := map[int][][2]float64{}
			for _, r := range c.Rounds {
				for _, a := range r.Arms {
					if a.Arm != arm || a.At.IsZero() || a.RSSBytes == 0 {
						continue
					}
					starts[r.Start] = append(starts[r.Start], [2]float64{float64(a.At.UnixNano()) / 6e10, res.pick(a)})
				}
			}
			g, ok := growth(starts, MinGrowthPoints)
			if !ok {
				continue
			}
			g.Arm, g.Resource, g.Limit = arm, res.name, res.limit
			g.Leak = g.Low > res.limit
			if late, ok := growth(laterHalf(starts), MinLaterPoints); g.Leak && ok && late.PerMinute <= res.limit {
				// Grown, but no longer growing: settling.
				g.Leak, g.Settling, g.LaterPerMinute = false, true, late.PerMinute
			}
			out = append(out, g)
		}
	}
	return out
}

// laterHalf keeps the points of each start from the middle of its time
// span on.
func laterHalf(starts map[int][][2]float64) map[int][][2]float64 {
	out := map[int][][2]float64{}
	for s, ps := range starts {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range ps {
			lo, hi = min(lo, p[0]), max(hi, p[0])
		}
		for _, p := range ps {
			if p[0] >= (lo+hi)/2 {
				out[s] = append(out[s], p)
			}
		}
	}
	return out
}

// readConnections reports whether any round of arm in c read its
// database connections: a service under load on a database workload
// holds at least one, so none at all means they were not read.
func readConnections(c *results.Comparison, arm string) bool {
	for _, r := range c.Rounds {
		for _, a := range r.Arms {
			if a.Arm == arm && a.DBConnections > 0 {
				return true
			}
		}
	}
	return false
}

// growth is the common within-start slope of the points (minutes,
// value) of each start, with its 95% interval from the residuals (the
// degrees of freedom are the points less one intercept a start and the
// slope); false with fewer than least points or no spread in time.
func growth(starts map[int][][2]float64, least int) (results.Growth, bool) {
	keys := make([]int, 0, len(starts))
	for s := range starts {
		keys = append(keys, s)
	}
	sort.Ints(keys)
	var sxy, sxx float64
	n, used := 0, 0
	span := 0.0
	type centred struct{ x, y float64 }
	var pts []centred
	for _, s := range keys {
		ps := starts[s]
		if len(ps) < 2 {
			continue
		}
		used++
		var mx, my float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range ps {
			mx += p[0]
			my += p[1]
			lo, hi = min(lo, p[0]), max(hi, p[0])
		}
		span += hi - lo
		mx /= float64(len(ps))
		my /= float64(len(ps))
		for _, p := range ps {
			dx, dy := p[0]-mx, p[1]-my
			sxy += dx * dy
			sxx += dx * dx
			pts = append(pts, centred{dx, dy})
			n++
		}
	}
	df := n - used - 1
	if n < least || sxx <= 0 || df < 1 {
		return results.Growth{}, false
	}
	b := sxy / sxx
	var sse float64
	for _, p := range pts {
		r := p.y - b*p.x
		sse += r * r
	}
	se := math.Sqrt(sse / float64(df) / sxx)
	h := stats.T975(df) * se
	return results.Growth{PerMinute: b, Low: b - h, High: b + h, Points: n, Minutes: span}, true
}

// decisive are the pairs a comparison's rounds and starts go on for: its
// ranking's, or at a rate the CPU per request's (a p99 over a few
// seconds is too noisy to steer the budget by; its interval is reported
// as it is).
func decisive(c *results.Comparison, v *results.Verdict) []results.PairRatio {
	if c.AtRate {
		return v.CPUPairs
	}
	return v.Pairs
}
