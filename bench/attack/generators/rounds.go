package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/stats"
)

var (
	rounds      = flag.Int("rounds", 10, "alternating rounds of the closed-model comparison with wrk")
	roundLen    = flag.Duration("round", 3*time.Second, "length of each tool's run in a round")
	floorBin    = flag.String("floor", "", "the C floor client's `binary` (bench/floor/floor.c, built by generators.sh)")
	floorArgs   = flag.String("floor-args", "-d {secs} -c {conns} {url}", "arguments of the floor client; {secs}, {conns}, {url}, {host} and {port} are replaced")
	floorRoundN = flag.Int("floor-rounds", 4, "alternating rounds of showdown against the floor client")
)

// arm is one side of an alternating comparison: a closed-model run of d.
type arm struct {
	name string
	run  func(d time.Duration) outcome
}

// alternate runs a and b in n rounds of d each, in the order A B, B A,
// A B, ... so the machine's drift hits both alike, prints each round, and
// returns every round's throughput and CPU per request of each (0 where a
// run failed: stats.RoundRatioCI95 leaves that round out).
func alternate(a, b arm, n int, d time.Duration) (tp, cpu [2][]float64) {
	for i := range n {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		got := [2]outcome{}
		for _, k := range order {
			am := []arm{a, b}[k]
			got[k] = am.run(d)
		}
		var parts []string
		for k, am := range []arm{a, b} {
			o := got[k]
			if o.err != nil {
				parts = append(parts, fmt.Sprintf("%s ERROR %v", am.name, o.err))
				tp[k], cpu[k] = append(tp[k], 0), append(cpu[k], 0)
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %8.0f req/s %5.1f µs/request", am.name, o.rps, o.cpuPerReq()))
			tp[k], cpu[k] = append(tp[k], o.rps), append(cpu[k], o.cpuPerReq())
		}
		first := []arm{a, b}[order[0]].name
		fmt.Printf("round %2d (%s first): %s\n", i+1, first, strings.Join(parts, "; "))
	}
	return tp, cpu
}

// printRatio prints a/b over the paired rounds with its 95% interval: the
// geometric mean of the per-round ratios and Student's t over their logs
// (stats.RoundRatioCI95 with one start).
func printRatio(what, a, b string, x, y []float64) {
	r := stats.RoundRatioCI95([][]float64{x}, [][]float64{y})
	if r.Rounds == 0 {
		fmt.Printf("ratio %s: %s/%s: no round measured both\n", what, a, b)
		return
	}
	if r.DF < 1 {
		fmt.Printf("ratio %s: %s/%s = %.3fx (one round: no interval)\n", what, a, b, r.Ratio)
		return
	}
	fmt.Printf("ratio %s: %s/%s = %.3fx, 95%% interval [%.3f, %.3f] (%d paired rounds)\n", what, a, b, r.Ratio, r.Low, r.High, r.Rounds)
}

// showdownClosed is showdown's closed model on the plain URL.
func showdownClosed(url string) arm {
	return arm{"showdown", func(d time.Duration) outcome {
		dir := filepath.Join(workdir, fmt.Sprintf("closed-%d", time.Now().UnixNano()))
		o := runTool("showdown", []string{*showdown, "attack", "--users", strconv.Itoa(*conns), "--duration", d.String(), "--out", dir, url}, nil)
		o = fromSummary(o, dir)
		os.RemoveAll(dir)
		return o
	}}
}

// closedRounds compares showdown with wrk in the closed model on the
// plain URL, *conns connections, in alternating rounds: throughput and
// CPU per request, each a ratio with its interval.
func closedRounds(url string) {
	fmt.Printf("\n## Closed model, plain URL, %d connections: showdown against wrk -t1 -c%d, %d alternating rounds of %s (generator CPU: user+sys, wait4)\n", *conns, *conns, *rounds, wrkDuration(*roundLen))
	path, ok := available("wrk")
	if !ok {
		return
	}
	if _, ok := available("showdown"); !ok {
		return
	}
	wrk := arm{"wrk", func(d time.Duration) outcome {
		return runTool("wrk", []string{path, "-t1", "-c" + strconv.Itoa(*conns), "-d" + wrkDuration(d), url}, parseWrk)
	}}
	d := wholeSeconds(*roundLen)
	tp, cpu := alternate(showdownClosed(url), wrk, *rounds, d)
	printRatio("throughput", "showdown", "wrk", tp[0], tp[1])
	printRatio("CPU/request", "showdown", "wrk", cpu[0], cpu[1])
}

// floorRounds measures the C floor client (one write and one read per
// request on 50 epoll connections: what loopback TCP alone costs) against
// showdown's closed model, in alternating rounds.
func floorRounds(url, addr string) {
	fmt.Printf("\n## The floor: a minimal C client (bench/floor/floor.c), closed model, %d connections, against showdown, %d alternating rounds of %s\n", *conns, *floorRoundN, wrkDuration(*roundLen))
	if *floorBin == "" {
		fmt.Printf("%-18s skipped: no -floor binary (bench/generators.sh builds bench/floor/floor.c with cc -O2 when the file exists)\n", "floor")
		return
	}
	if _, err := os.Stat(*floorBin); err != nil {
		fmt.Printf("%-18s skipped: %v\n", "floor", err)
		return
	}
	host, port, _ := strings.Cut(addr, ":")
	floor := arm{"floor", func(d time.Duration) outcome {
		secs := strconv.Itoa(int(d.Seconds()))
		args := strings.Fields(strings.NewReplacer("{secs}", secs, "{conns}", strconv.Itoa(*conns), "{url}", url, "{host}", host, "{port}", port).Replace(*floorArgs))
		return runTool("floor", append([]string{*floorBin}, args...), func(out string, o *outcome) { parseFloor(out, d, o) })
	}}
	d := wholeSeconds(*roundLen)
	tp, cpu := alternate(showdownClosed(url), floor, *floorRoundN, d)
	printRatio("throughput", "showdown", "floor", tp[0], tp[1])
	printRatio("CPU/request", "showdown", "floor", cpu[0], cpu[1])
}

var (
	reFloorReqs = regexp.MustCompile(`(?i)(\d+)\s+requests|requests[\s:=]+(\d+)`)
	reFloorRPS  = regexp.MustCompile(`(?i)([\d.]+)\s*(?:req/s|requests/s)`)
)

// parseFloor reads the floor client's count of requests ("N requests",
// "requests: N"), or its rate ("R req/s") times the run's length. Its CPU
// comes from wait4 like every other tool's, whatever it prints.
func parseFloor(out string, d time.Duration, o *outcome) {
	if m := reFloorReqs.FindStringSubmatch(out); m != nil {
		v := m[1] + m[2]
		o.requests, _ = strconv.ParseInt(v, 10, 64)
	}
	if m := reFloorRPS.FindStringSubmatch(out); m != nil {
		o.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	if o.requests == 0 && o.rps > 0 {
		o.requests = int64(math.Round(o.rps * d.Seconds()))
	}
	if o.rps == 0 && o.requests > 0 {
		o.rps = float64(o.requests) / d.Seconds()
	}
}

// wholeSeconds rounds d to whole seconds, at least one, as wrk and the
// floor client take it, so every tool of a round runs as long.
func wholeSeconds(d time.Duration) time.Duration {
	return time.Duration(max(1, int(math.Round(d.Seconds())))) * time.Second
}
