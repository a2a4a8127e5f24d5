// Command generators benchmarks showdown's load engine side by side with
// wrk, wrk2, hey, k6 and a minimal C client against the same minimal
// net/http server: peak throughput in the closed model, generator CPU per
// request in the open model, send lateness in the open model, memory per
// virtual user (main.go); the open-model table of both engines beside
// wrk2 and the coordinated-omission check against a stalling server
// (open.go); the closed model against wrk and the C floor in alternating
// rounds, with intervals (rounds.go). The server is pinned to one CPU and
// every generator to another, and each generator's CPU time and peak RSS
// are read from the kernel (wait4 rusage). A missing tool is skipped with a
// line saying so; nothing is installed. Run it through bench/generators.sh.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	showdown  = flag.String("showdown", "", "showdown `binary`")
	hello     = flag.String("hello", "", "hello server `binary`")
	k6        = flag.String("k6", "/root/go/bin/k6", "k6 `binary`")
	serverCPU = flag.String("server-cpu", "0", "CPU list of the server (taskset)")
	genCPU    = flag.String("gen-cpu", "1", "CPU list of the generators (taskset)")
	duration  = flag.Duration("duration", 10*time.Second, "length of each run")
	conns     = flag.Int("c", 50, "connections for the throughput test")
	rate      = flag.Int("rate", 10000, "requests/s for the open-model CPU test")
	only      = flag.String("only", "throughput,cpu,lateness,memory,open,stall,closed,floor", "comma-separated `tests` to run")
	lateRates = flag.String("late-rates", "500,5000", "open-model rates of the lateness test")
	tools     = flag.String("tools", "showdown,showdown-goroutine,wrk,hey,k6", "comma-separated `tools` to compare (showdown-goroutine: the open model on the goroutine engine)")
	memUsers  = flag.String("mem-users", "1000,10000", "closed-model user counts for the memory test")
	workdir   string
)

// outcome is what one generator run measured.
type outcome struct {
	requests int64
	rps      float64
	cpu      time.Duration // user+sys of the generator
	rssMB    float64
	switches int64  // context switches of the generator (voluntary and not): its wake-ups, mostly
	late     string // late/dropped note, when the tool reports it
	err      error
	// Open-model latency figures, ms (lateness: showdown only).
	latP50, latP99, latMax, svcP50, lateP50, lateP99 float64
}

func (o outcome) cpuPerReq() float64 {
	if o.requests == 0 {
		return 0
	}
	return float64(o.cpu.Microseconds()) / float64(o.requests)
}

func main() {
	flag.Parse()
	var err error
	workdir, err = os.MkdirTemp("", "showdown-bench-")
	check(err)
	defer os.RemoveAll(workdir)

	addr, stop := startServer()
	defer stop()
	url := "http://" + addr + "/"
	fmt.Printf("server %s pinned to CPU %s; generators pinned to CPU %s; runs of %s\n", url, *serverCPU, *genCPU, *duration)
	want := func(test string) bool { return strings.Contains(","+*only+",", ","+test+",") }

	if want("throughput") {
		fmt.Printf("\n## Peak throughput, closed model, %d connections, %s\n", *conns, *duration)
		res := map[string]outcome{}
		var order []string
		for _, t := range toolList() {
			o, ok := throughput(t, url)
			if !ok {
				continue
			}
			res[t], order = o, append(order, t)
			report(t, o)
		}
		ratios(res, order, "showdown", func(o outcome) float64 { return o.rps }, "throughput")
	}
	if want("cpu") {
		fmt.Printf("\n## Generator CPU per request, open model, %d req/s, %s\n", *rate, *duration)
		res := map[string]outcome{}
		var order []string
		for _, t := range toolList() {
			o, ok := openCPU(t, url)
			if !ok {
				continue
			}
			res[t], order = o, append(order, t)
			report(t, o)
		}
		ratios(res, order, "showdown", func(o outcome) float64 { return o.cpuPerReq() }, "CPU/request")
	}
	if want("lateness") {
		fmt.Printf("\n## Send lateness, open model, %s per rate (latency from the intended send time; service time from the actual send)\n", *duration)
		for _, f := range strings.Split(*lateRates, ",") {
			r, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || r <= 0 {
				continue
			}
			for _, t := range append(toolList(), "wrk2") {
				o, ok := lateness(t, url, r)
				if !ok {
					continue
				}
				if o.err != nil {
					fmt.Printf("%-18s %6d req/s  ERROR %v\n", t, r, o.err)
					continue
				}
				lateCol := "lateness p50/p99      -/-     "
				if o.lateP99 > 0 || o.lateP50 > 0 {
					lateCol = fmt.Sprintf("lateness p50/p99 %6.3f/%-7.3f", o.lateP50, o.lateP99)
				}
				svc := "     -"
				if o.svcP50 > 0 {
					svc = fmt.Sprintf("%6.3f", o.svcP50)
				}
				fmt.Printf("%-18s %6d req/s  latency p50/p99 %6.3f/%-7.3f ms  service p50 %s ms  %s ms  CPU %5.1f µs/request  %s\n",
					t, r, o.latP50, o.latP99, svc, lateCol, o.cpuPerReq(), o.late)
			}
		}
	}
	if want("open") {
		openTable(addr)
	}
	if want("stall") {
		stallTest()
	}
	if want("closed") {
		closedRounds(url)
	}
	if want("floor") {
		floorRounds(url, addr)
	}
	if want("memory") {
		fmt.Printf("\n## showdown memory, closed model, users with 1s think time, %s\n", *duration)
		for _, f := range strings.Split(*memUsers, ",") {
			n, _ := strconv.Atoi(f)
			if n <= 0 {
				continue
			}
			dir := filepath.Join(workdir, "mem"+f)
			o := runTool("showdown", []string{*showdown, "attack", "--users", f, "--ramp-up", "2s", "--think-time", "1s",
				"--duration", duration.String(), "--out", dir, url}, nil)
			o = fromSummary(o, dir)
			fmt.Printf("%-18s %6d users: max RSS %6.1f MB, %d requests, CPU %.2fs", "showdown", n, o.rssMB, o.requests, o.cpu.Seconds())
			if o.err != nil {
				fmt.Printf("  ERROR %v", o.err)
			}
			fmt.Println()
		}
	}
}

func toolList() []string { return strings.Split(*tools, ",") }

func report(t string, o outcome) {
	if o.err != nil {
		fmt.Printf("%-18s ERROR %v\n", t, o.err)
		return
	}
	fmt.Printf("%-18s %9.0f req/s  %9d requests  CPU %6.2fs  %6.1f µs/request  max RSS %6.1f MB  %s\n",
		t, o.rps, o.requests, o.cpu.Seconds(), o.cpuPerReq(), o.rssMB, o.late)
}

func ratios(res map[string]outcome, order []string, base string, val func(outcome) float64, what string) {
	b, ok := res[base]
	if !ok || b.err != nil || val(b) == 0 {
		return
	}
	for _, t := range order {
		if t == base || res[t].err != nil || val(res[t]) == 0 {
			continue
		}
		fmt.Printf("ratio %s: showdown/%s = %.2fx\n", what, t, val(b)/val(res[t]))
	}
}

// available reports whether tool can run, printing a line if not.
func available(t string) (string, bool) {
	path := ""
	switch t {
	case "showdown", "showdown-goroutine":
		path = *showdown
	case "k6":
		path = *k6
		if _, err := os.Stat(path); err != nil {
			path = ""
			if p, err := exec.LookPath("k6"); err == nil {
				path = p
			}
		}
	default:
		if p, err := exec.LookPath(t); err == nil {
			path = p
		}
	}
	if path == "" {
		fmt.Printf("%-18s skipped: not installed (apt-get install %s, or go install go.k6.io/k6@latest for k6)\n", t, t)
		return "", false
	}
	return path, true
}

func throughput(t, url string) (outcome, bool) {
	path, ok := available(t)
	if !ok {
		return outcome{}, false
	}
	d, c := duration.String(), strconv.Itoa(*conns)
	switch t {
	case "showdown-goroutine":
		return outcome{}, false // the closed model has one engine
	case "showdown":
		dir := filepath.Join(workdir, "tp")
		o := runTool(t, []string{path, "attack", "--users", c, "--duration", d, "--out", dir, url}, nil)
		return fromSummary(o, dir), true
	case "wrk":
		return runTool(t, []string{path, "-t1", "-c" + c, "-d" + wrkDuration(*duration), url}, parseWrk), true
	case "hey":
		return runTool(t, []string{path, "-z", d, "-c", c, url}, parseHey), true
	case "k6":
		script := k6Script(fmt.Sprintf(`{executor: 'constant-vus', vus: %d, duration: '%s'}`, *conns, d), url)
		return runTool(t, []string{path, "run", "-q", script}, parseK6), true
	}
	fmt.Printf("%-18s skipped: unknown tool\n", t)
	return outcome{}, false
}

func openCPU(t, url string) (outcome, bool) {
	path, ok := available(t)
	if !ok {
		return outcome{}, false
	}
	d, r := duration.String(), strconv.Itoa(*rate)
	switch t {
	case "showdown", "showdown-goroutine":
		dir := filepath.Join(workdir, "cpu-"+t)
		var env []string
		if t == "showdown-goroutine" {
			env = []string{"SHOWDOWN_ENGINE=goroutine"}
		}
		o := runToolEnv(t, []string{path, "attack", "--rate", r, "--duration", d, "--out", dir, url}, nil, env)
		return fromSummary(o, dir), true
	case "wrk":
		fmt.Printf("%-18s skipped: wrk has no fixed-rate mode (wrk2 does; not packaged in Debian)\n", t)
		return outcome{}, false
	case "hey":
		// hey's -q is per worker: 50 workers x rate/50.
		return runTool(t, []string{path, "-z", d, "-c", "50", "-q", strconv.Itoa(*rate / 50), url}, parseHey), true
	case "k6":
		script := k6Script(fmt.Sprintf(`{executor: 'constant-arrival-rate', rate: %d, timeUnit: '1s', duration: '%s', preAllocatedVUs: 200, maxVUs: 1000}`, *rate, d), url)
		return runTool(t, []string{path, "run", "-q", script}, parseK6), true
	}
	return outcome{}, false
}

// lateness runs tool t in the open model at rate r and reads its latency
// figures. Only showdown reports its own send lateness; wrk2 (if installed)
// reports latency from the intended send time too.
func lateness(t, url string, r int) (outcome, bool) {
	d, rs := duration.String(), strconv.Itoa(r)
	switch t {
	case "showdown", "showdown-goroutine":
		path, ok := available(t)
		if !ok {
			return outcome{}, false
		}
		dir := filepath.Join(workdir, fmt.Sprintf("late-%s-%d", t, r))
		var env []string
		if t == "showdown-goroutine" {
			env = []string{"SHOWDOWN_ENGINE=goroutine"}
		}
		o := runToolEnv(t, []string{path, "attack", "--rate", rs, "--duration", d, "--warmup", "1s", "--out", dir, url}, nil, env)
		return fromSummary(o, dir), true
	case "wrk2":
		path, ok := wrk2Binary()
		if !ok {
			return outcome{}, false
		}
		return runTool(t, []string{path, "-t1", "-c10", "-d" + wrkDuration(*duration), "-R" + rs, "--latency", url}, parseWrk2), true
	}
	return outcome{}, false
}

var reWrk2Pct = regexp.MustCompile(`(?m)^\s*(50|99|100)\.000%\s+([\d.]+)(us|ms|s|m)\s*$`)

// parseWrk2 reads wrk2's --latency percentiles (corrected for coordinated
// omission, from the intended send time).
func parseWrk2(out string, o *outcome) {
	parseWrk(out, o)
	for _, m := range reWrk2Pct.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		switch m[3] {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		case "m":
			v *= 60000
		}
		switch m[1] {
		case "50":
			o.latP50 = v
		case "99":
			o.latP99 = v
		case "100":
			o.latMax = v
		}
	}
}

func k6Script(scenario, url string) string {
	p := filepath.Join(workdir, fmt.Sprintf("k6-%d.js", time.Now().UnixNano()))
	src := fmt.Sprintf(`import http from 'k6/http';
export const options = { discardResponseBodies: true, scenarios: { s: %s } };
export default function () { http.get('%s'); }
`, scenario, url)
	check(os.WriteFile(p, []byte(src), 0o644))
	return p
}

// runTool runs argv pinned to the generator CPU and measures it.
func runTool(name string, argv []string, parse func(string, *outcome)) outcome {
	return runToolEnv(name, argv, parse, nil)
}

// runToolEnv is runTool with extra environment variables.
func runToolEnv(name string, argv []string, parse func(string, *outcome), env []string) outcome {
	cmd := exec.Command("taskset", append([]string{"-c", *genCPU}, argv...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.CombinedOutput()
	var o outcome
	if cmd.ProcessState != nil {
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		o.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		o.rssMB = float64(ru.Maxrss) / 1024
		o.switches = ru.Nvcsw + ru.Nivcsw
	}
	if err != nil {
		o.err = fmt.Errorf("%v: %s", err, tail(string(out)))
		return o
	}
	if parse != nil {
		parse(string(out), &o)
		if o.requests == 0 {
			o.err = fmt.Errorf("could not read its output: %s", tail(string(out)))
		}
	}
	return o
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 600 {
		s = "..." + s[len(s)-600:]
	}
	return s
}

func fromSummary(o outcome, dir string) outcome {
	if o.err != nil {
		return o
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		o.err = err
		return o
	}
	type stats struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
		Max float64 `json:"max"`
	}
	var s struct {
		Lateness stats   `json:"send_lateness_ms"`
		Duration float64 `json:"duration_seconds"`
		Achieved float64 `json:"achieved_rate"`
		Late     int64   `json:"late_sends"`
		Dropped  int64   `json:"dropped_sends"`
		Model    string  `json:"model"`
		Total    struct {
			Samples int64 `json:"samples"`
			Errors  int64 `json:"errors"`
			Latency stats `json:"latency_ms"`
			Service stats `json:"service_ms"`
		} `json:"total"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		o.err = err
		return o
	}
	o.requests = s.Total.Samples
	o.rps = s.Achieved
	o.latP50, o.latP99, o.latMax, o.svcP50 = s.Total.Latency.P50, s.Total.Latency.P99, s.Total.Latency.Max, s.Total.Service.P50
	o.lateP50, o.lateP99 = s.Lateness.P50, s.Lateness.P99
	o.late = fmt.Sprintf("errors %d", s.Total.Errors)
	if s.Model == "open" {
		o.late += fmt.Sprintf(", late %d, dropped %d", s.Late, s.Dropped)
	}
	return o
}

var (
	reWrkReqs = regexp.MustCompile(`(\d+) requests in`)
	reRPS     = regexp.MustCompile(`Requests/sec:\s+([\d.]+)`)
	reHeyOK   = regexp.MustCompile(`\[\d+\]\s+(\d+) responses`)
	reK6Reqs  = regexp.MustCompile(`http_reqs\.*:\s*(\d+)\s+([\d.]+)/s`)
	reK6Drop  = regexp.MustCompile(`dropped_iterations\.*:\s*(\d+)`)
)

func parseWrk(out string, o *outcome) {
	if m := reWrkReqs.FindStringSubmatch(out); m != nil {
		o.requests, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reRPS.FindStringSubmatch(out); m != nil {
		o.rps, _ = strconv.ParseFloat(m[1], 64)
	}
}

func parseHey(out string, o *outcome) {
	for _, m := range reHeyOK.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		o.requests += n
	}
	if m := reRPS.FindStringSubmatch(out); m != nil {
		o.rps, _ = strconv.ParseFloat(m[1], 64)
	}
}

func parseK6(out string, o *outcome) {
	if m := reK6Reqs.FindStringSubmatch(out); m != nil {
		o.requests, _ = strconv.ParseInt(m[1], 10, 64)
		o.rps, _ = strconv.ParseFloat(m[2], 64)
	}
	if m := reK6Drop.FindStringSubmatch(out); m != nil {
		o.late = "dropped " + m[1]
	}
}

// startServer starts the hello server pinned to the server's CPUs, with
// extra arguments (the stalling mode), and returns its address and how to
// stop it.
func startServer(args ...string) (string, func()) {
	cmd := exec.Command("taskset", append([]string{"-c", *serverCPU, *hello}, args...)...)
	stdout, err := cmd.StdoutPipe()
	check(err)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	check(err)
	return strings.TrimSpace(line), func() { cmd.Process.Kill(); cmd.Wait() }
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "generators:", err)
		os.Exit(1)
	}
}
