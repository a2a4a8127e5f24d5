package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	wrk2Flag   = flag.String("wrk2", "", "wrk2 `binary` (default: $WRK2, then wrk2 on PATH)")
	openRates  = flag.String("open-rates", "1000,5000,10000,20000,40000", "rates of the open-model table (req/s)")
	openTools  = flag.String("open-tools", "showdown,showdown-scenario,wrk2", "`tools` of the open-model table and the stall test (showdown-scenario: a one-step scenario file, the scenario engine; a -slackD suffix, showdown-slack1ms, adds --pace-slack D)")
	wrk2Conns  = flag.Int("wrk2-c", 50, "connections of wrk2 in the open-model table and the stall test")
	stallRate  = flag.Int("stall-rate", 2000, "open-model rate of the stall test (req/s)")
	stallFor   = flag.Duration("stall", time.Second, "the stalling server stops answering for this `long`...")
	stallEvery = flag.Duration("stall-every", 5*time.Second, "...once in every `period`")
	stallRun   = flag.Duration("stall-duration", 10*time.Second, "length of each run of the stall test (a whole number of -stall-every periods)")
)

// wrk2Binary finds wrk2: -wrk2, $WRK2, then wrk2 on PATH (a build of
// giltene/wrk2 is called wrk: point WRK2 at it). It prints a line when
// there is none.
func wrk2Binary() (string, bool) {
	for _, p := range []string{*wrk2Flag, os.Getenv("WRK2")} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			fmt.Printf("%-18s skipped: %v\n", "wrk2", err)
			return "", false
		}
		return p, true
	}
	if p, err := exec.LookPath("wrk2"); err == nil {
		return p, true
	}
	fmt.Printf("%-18s skipped: not installed (not packaged in Debian: build github.com/giltene/wrk2 and set WRK2=/path/to/its/wrk)\n", "wrk2")
	return "", false
}

// wrkDuration is d as wrk and wrk2 read it: whole seconds, at least one.
func wrkDuration(d time.Duration) string {
	return fmt.Sprintf("%ds", max(1, int(math.Round(d.Seconds()))))
}

// scenarioFile writes the one-step scenario of the scenario engine's
// runs: GET / expecting 200, as the plain URL attack does.
func scenarioFile() string {
	p := filepath.Join(workdir, "hello.yaml")
	check(os.WriteFile(p, []byte(`name: hello
steps:
  - name: hello
    method: GET
    url: /
    expect:
      status: 200
`), 0o644))
	return p
}

// openRun runs tool t in the open model at rate r for d against the
// server at addr, without warm-up (wrk2 has none either): latency from
// the intended send time, and the generator's CPU from wait4.
func openRun(t, addr, scenario string, r int, d time.Duration) (outcome, bool) {
	url := "http://" + addr + "/"
	// showdown-slack1ms, showdown-scenario-slack1ms: the same with
	// --pace-slack 1ms (wrk2's one wake a millisecond), or any duration.
	base, slack := t, ""
	if i := strings.Index(t, "-slack"); i > 0 && strings.HasPrefix(t, "showdown") {
		base, slack = t[:i], t[i+len("-slack"):]
		if _, err := time.ParseDuration(slack); err != nil {
			fmt.Printf("%-18s skipped: %q after -slack is not a duration (showdown-slack1ms)\n", t, slack)
			return outcome{}, false
		}
	}
	switch base {
	case "showdown", "showdown-scenario":
		dir := filepath.Join(workdir, fmt.Sprintf("open-%s-%d-%d", t, r, time.Now().UnixNano()))
		argv := []string{*showdown, "attack", "--rate", strconv.Itoa(r), "--duration", d.String(), "--out", dir}
		if slack != "" {
			argv = append(argv, "--pace-slack", slack)
		}
		if base == "showdown" {
			argv = append(argv, url)
		} else {
			argv = append(argv, "--scenario", scenario, "--base-url", "http://"+addr)
		}
		return fromSummary(runTool(t, argv, nil), dir), true
	case "wrk2":
		path, ok := wrk2Binary()
		if !ok {
			return outcome{}, false
		}
		return runTool(t, []string{path, "-t1", "-c" + strconv.Itoa(*wrk2Conns), "-d" + wrkDuration(d), "-R" + strconv.Itoa(r), "--latency", url}, parseWrk2), true
	}
	fmt.Printf("%-18s skipped: unknown tool of the open-model table (showdown, showdown-scenario, wrk2; showdown-slack1ms: with --pace-slack 1ms)\n", t)
	return outcome{}, false
}

// openTable is the open-model table for both engines beside wrk2:
// at each rate, p50 latency from the intended send time minus the
// service time p50, the send lateness, CPU per request and its ratio to
// wrk2's, and the generator's context switches per request (its
// wake-ups, mostly: on a virtual machine each costs tens of µs, and a
// precise pacer needs one per send once sends are further apart than its
// slack).
func openTable(addr string) {
	fmt.Printf("\n## Open model, %s per rate, no warm-up: p50 latency (from the intended send time) minus the service time p50, send lateness, generator CPU per request (user+sys, wait4) and its ratio to wrk2's (wrk2 -t1 -c%d -R rate), context switches per request (wait4)\n", *duration, *wrk2Conns)
	scenario := scenarioFile()
	tools := strings.Split(*openTools, ",")
	if slices.Contains(tools, "wrk2") {
		if _, ok := wrk2Binary(); !ok {
			tools = slices.DeleteFunc(tools, func(t string) bool { return t == "wrk2" })
		}
	}
	fmt.Printf("%-18s %7s %9s %8s %8s %8s %17s %9s %7s %9s  %s\n", "tool", "rate", "achieved", "p50 ms", "svc p50", "p50-svc", "lateness p50/p99", "µs/req", "÷wrk2", "wakes/req", "notes")
	for _, f := range strings.Split(*openRates, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r <= 0 {
			fmt.Printf("open-rates: %q is not a positive whole rate; skipped\n", f)
			continue
		}
		res := map[string]outcome{}
		var order []string
		for _, t := range tools {
			o, ok := openRun(t, addr, scenario, r, *duration)
			if !ok {
				continue
			}
			res[t], order = o, append(order, t)
		}
		// wrk2 does not measure the service time: its p50-svc takes the
		// service time p50 that showdown measured at the same rate.
		ref := 0.0
		for _, t := range []string{"showdown", "showdown-scenario"} {
			if o, ok := res[t]; ok && o.err == nil && o.svcP50 > 0 && ref == 0 {
				ref = o.svcP50
			}
		}
		w, haveW := res["wrk2"]
		for _, t := range order {
			o := res[t]
			if o.err != nil {
				fmt.Printf("%-18s %7d  ERROR %v\n", t, r, o.err)
				continue
			}
			svc, note := o.svcP50, o.late
			if t == "wrk2" {
				svc, note = ref, "svc p50: showdown's at this rate"
			}
			gap, svcCol := "-", "-"
			if svc > 0 {
				gap, svcCol = fmt.Sprintf("%.3f", o.latP50-svc), fmt.Sprintf("%.3f", svc)
			}
			late := "-/-"
			if o.lateP50 > 0 || o.lateP99 > 0 {
				late = fmt.Sprintf("%.3f/%.3f", o.lateP50, o.lateP99)
			}
			ratio := "-"
			if haveW && w.err == nil && w.cpuPerReq() > 0 && o.cpuPerReq() > 0 {
				ratio = fmt.Sprintf("%.2fx", o.cpuPerReq()/w.cpuPerReq())
			}
			wakes := "-"
			if o.requests > 0 {
				wakes = fmt.Sprintf("%.2f", float64(o.switches)/float64(o.requests))
			}
			fmt.Printf("%-18s %7d %9.0f %8.3f %8s %8s %17s %9.1f %7s %9s  %s\n", t, r, o.rps, o.latP50, svcCol, gap, late, o.cpuPerReq(), ratio, wakes, note)
		}
	}
}

// stallTest is the coordinated-omission check: a server that stops
// answering for -stall once every -stall-every, at -stall-rate, showdown's
// p99 against wrk2's. A generator that waits for the stalled responses
// before sending the next (coordinated omission) would report a p99 near
// the service time; one that counts from the intended send time reports
// about stall × (1 - 0.01 / (stall / period)).
func stallTest() {
	fmt.Printf("\n## Coordinated omission: the server stops answering for %s every %s; open model, %d req/s, %s per tool, no warm-up\n", *stallFor, *stallEvery, *stallRate, *stallRun)
	if *stallFor <= 0 || *stallEvery <= *stallFor {
		fmt.Printf("stall test skipped: -stall %s must be positive and shorter than -stall-every %s\n", *stallFor, *stallEvery)
		return
	}
	if *stallRun < *stallEvery || *stallRun%*stallEvery != 0 {
		fmt.Printf("note: -stall-duration %s is not a whole number of %s periods: the share of requests caught in a stall depends on where the run starts, and the tools' p99 may differ for that alone\n", *stallRun, *stallEvery)
	}
	addr, stop := startServer("-stall", stallFor.String(), "-every", stallEvery.String())
	started := time.Now() // the server's stall schedule began a moment before
	defer stop()
	if share := stallFor.Seconds() / stallEvery.Seconds(); share > 0.01 {
		fmt.Printf("expected p99 from the stall pattern alone: %.1f ms plus the service time (%.0f%% of the requests wait for a stall's end, uniformly up to %s)\n",
			1000*stallFor.Seconds()*(1-0.01/share), 100*share, *stallFor)
	}
	scenario := scenarioFile()
	res := map[string]outcome{}
	var order []string
	for _, t := range strings.Split(*openTools, ",") {
		// Every tool starts halfway through a period's answering part, so
		// its run holds whole stalls only, none cut by its start or end.
		time.Sleep(untilPhase(time.Since(started), *stallEvery, (*stallEvery-*stallFor)/2))
		o, ok := openRun(t, addr, scenario, *stallRate, *stallRun)
		if !ok {
			continue
		}
		res[t], order = o, append(order, t)
		if o.err != nil {
			fmt.Printf("%-18s ERROR %v\n", t, o.err)
			continue
		}
		fmt.Printf("%-18s %6.0f req/s  latency p50 %8.3f  p99 %8.1f  max %8.1f ms  CPU %5.1f µs/request  %s\n", t, o.rps, o.latP50, o.latP99, o.latMax, o.cpuPerReq(), o.late)
	}
	w, ok := res["wrk2"]
	if !ok || w.err != nil || w.latP99 == 0 {
		fmt.Println("no wrk2 p99 to compare with (compare the p99 above with the expected one)")
		return
	}
	for _, t := range order {
		o := res[t]
		if t == "wrk2" || o.err != nil || o.latP99 == 0 {
			continue
		}
		ratio := o.latP99 / w.latP99
		verdict := "within 2%"
		if math.Abs(ratio-1) > 0.02 {
			verdict = fmt.Sprintf("off by %.1f%% (target: within 2%%)", 100*(ratio-1))
		}
		fmt.Printf("ratio p99: %s/wrk2 = %.4fx (%.1f / %.1f ms): %s\n", t, ratio, o.latP99, w.latP99, verdict)
	}
}

// untilPhase is how long to wait, elapsed into a schedule of the given
// period, until the next instant at phase into a period.
func untilPhase(elapsed, period, phase time.Duration) time.Duration {
	return (phase - elapsed%period + period) % period
}
