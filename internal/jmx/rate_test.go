package jmx

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/load"
)

// ctt is a Constant Throughput Timer as JMeter writes it: the throughput
// a doubleProp, the mode an intProp.
func ctt(name, throughput string, mode int) string {
	tput := fmt.Sprintf(`<doubleProp><name>throughput</name><value>%s</value><savedValue>0.0</savedValue></doubleProp>`, throughput)
	if strings.Contains(throughput, "$") || throughput == "fast" {
		tput = fmt.Sprintf(`<stringProp name="throughput">%s</stringProp>`, throughput)
	}
	return fmt.Sprintf(`<ConstantThroughputTimer guiclass="TestBeanGUI" testclass="ConstantThroughputTimer" testname="%s">
  <intProp name="calcMode">%d</intProp>
  %s
</ConstantThroughputTimer>
<hashTree/>
`, name, mode, tput)
}

// ptt is a Precise Throughput Timer.
func ptt(throughput, period string, batch, seed int) string {
	return fmt.Sprintf(`<PreciseThroughputTimer guiclass="TestBeanGUI" testclass="PreciseThroughputTimer" testname="precise">
  <doubleProp><name>allowedThroughputSurplus</name><value>1.0</value><savedValue>0.0</savedValue></doubleProp>
  <intProp name="exactLimit">10000</intProp>
  <doubleProp><name>throughput</name><value>%s</value><savedValue>0.0</savedValue></doubleProp>
  <intProp name="throughputPeriod">%s</intProp>
  <longProp name="duration">3600</longProp>
  <intProp name="batchSize">%d</intProp>
  <intProp name="batchThreadDelay">0</intProp>
  <longProp name="randomSeed">%d</longProp>
</PreciseThroughputTimer>
<hashTree/>
`, throughput, period, batch, seed)
}

// shaping is a Throughput Shaping Timer with rows "start,end,seconds".
func shaping(rows ...string) string {
	var b strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&b, `<collectionProp name="%d">`, 1000+i)
		for j, v := range strings.Split(r, ",") {
			fmt.Fprintf(&b, `<stringProp name="%d">%s</stringProp>`, 48+j, v)
		}
		b.WriteString("</collectionProp>")
	}
	return `<kg.apc.jmeter.timers.VariableThroughputTimer guiclass="kg.apc.jmeter.timers.VariableThroughputTimerGui" testclass="kg.apc.jmeter.timers.VariableThroughputTimer" testname="shape">
<collectionProp name="load_profile">` + b.String() + `</collectionProp>
</kg.apc.jmeter.timers.VariableThroughputTimer>
<hashTree/>
`
}

// threads sets the test plan's thread count and, with seconds > 0, its
// scheduler's duration.
func threads(plan string, n, seconds int) string {
	plan = strings.Replace(plan, `<stringProp name="ThreadGroup.num_threads">1</stringProp>`, fmt.Sprintf(`<stringProp name="ThreadGroup.num_threads">%d</stringProp>`, n), 1)
	if seconds > 0 {
		plan = strings.Replace(plan, `<stringProp name="ThreadGroup.on_sample_error">`, fmt.Sprintf(`<boolProp name="ThreadGroup.scheduler">true</boolProp><stringProp name="ThreadGroup.duration">%d</stringProp><stringProp name="ThreadGroup.on_sample_error">`, seconds), 1)
	}
	return plan
}

func TestRateTimers(t *testing.T) {
	two := smp("a", "GET", "/a", "", "") + smp("b", "GET", "/b", "", "")
	tests := []struct {
		name     string
		children string
		threads  int
		seconds  int // the scheduler's duration; 0: 1 loop
		props    map[string]string
		// the open model; nil for the closed one
		want   *load.OpenModel
		report []string // in what the timer became
		notes  []string
		skip   string
	}{
		// 6,000 samples/min in all active threads, one step: 100
		// iterations/s, even, over the 10 threads' connections.
		{name: "constant throughput", children: ctt("ctt", "6000.0", 1) + smp("a", "GET", "/a", "", ""), threads: 10, seconds: 30,
			want:   &load.OpenModel{Rate: 100, Duration: 30 * time.Second, Arrivals: load.Even, Connections: 10},
			report: []string{"open model at 100 iterations/s", "6,000 samples/min based on all active threads: 100 samples/s; 1 step per iteration"}},
		// This thread only: 60/min x 10 threads = 10 samples/s over 2
		// steps per iteration; 1 loop of 10 threads lasts 2s at 5/s.
		{name: "per thread", children: ctt("ctt", "60", 0) + two, threads: 10,
			want:   &load.OpenModel{Rate: 5, Duration: 2 * time.Second, Arrivals: load.Even, Connections: 10},
			report: []string{"5 iterations/s", "x 10 threads", "2 steps per iteration"}},
		// JMeter's loops make 10 iterations: 100ms of them at 100/s.
		{name: "loops", children: ctt("ctt", "6000", 2) + smp("a", "GET", "/a", "", ""), threads: 10,
			want: &load.OpenModel{Rate: 100, Duration: 100 * time.Millisecond, Arrivals: load.Even, Connections: 10}},
		// A timer in one sampler's scope paces that sampler alone.
		{name: "sampler scope", children: smp("a", "GET", "/a", "", ctt("ctt", "600", 2)) + smp("b", "GET", "/b", "", ""), threads: 4, seconds: 10,
			want:   &load.OpenModel{Rate: 10, Duration: 10 * time.Second, Arrivals: load.Even, Connections: 4},
			report: []string{"1 of the 2 steps of an iteration in its scope"}},
		// The throughput from a property, its default and -J.
		{name: "property", children: ctt("ctt", "${__P(rate,1200)}", 2) + smp("a", "GET", "/a", "", ""), threads: 2, seconds: 5,
			want: &load.OpenModel{Rate: 20, Duration: 5 * time.Second, Arrivals: load.Even, Connections: 2}},
		{name: "property set", children: ctt("ctt", "${__P(rate,1200)}", 2) + smp("a", "GET", "/a", "", ""), threads: 2, seconds: 5, props: map[string]string{"rate": "600"},
			want: &load.OpenModel{Rate: 10, Duration: 5 * time.Second, Arrivals: load.Even, Connections: 2}},
		// Not a number: listed, and the load stays closed.
		{name: "not a number", children: ctt("ctt", "fast", 2) + smp("a", "GET", "/a", "", ""), threads: 2, seconds: 5,
			skip: `the target throughput "fast" is not a number`},
		// Precise Throughput Timer: 360 per 60 s, Poisson with its seed;
		// batches are said to be one by one.
		{name: "precise", children: ptt("360.0", "60", 3, 42) + smp("a", "GET", "/a", "", ""), threads: 20, seconds: 60,
			want:   &load.OpenModel{Rate: 6, Duration: time.Minute, Arrivals: load.Poisson, Seed: 42, Connections: 20},
			report: []string{"6 iterations/s", "Poisson process", "(seed 42)", "poisson arrivals over a pool of 20 connections"},
			notes:  []string{"batches of 3 samples (batchSize) are not translated"}},
		// Throughput Shaping Timer: 0 to 500 samples/s over 2 steps is 0
		// to 250 iterations/s; the jump from 500 to 300 is a 1s stage.
		{name: "shaping", children: shaping("0,500,10", "500,500,20", "300,300,10", "300,0,5") + two, threads: 100, seconds: 120,
			want: &load.OpenModel{Rate: 0, Arrivals: load.Even, Connections: 100, Stages: []load.Stage{
				{Duration: 10 * time.Second, Target: 250}, {Duration: 20 * time.Second, Target: 250}, {Duration: time.Second, Target: 150},
				{Duration: 10 * time.Second, Target: 150}, {Duration: 5 * time.Second, Target: 0}}},
			report: []string{"open model, 5 stages, 0 to 250 iterations/s (4 rows, 0 to 500 samples/s; 2 steps per iteration)"},
			notes:  []string{"a 1s stage to the new rate"}},
		// The thread group's duration stops JMeter before the profile
		// ends: the stages are cut there, at the rate reached.
		{name: "shaping cut", children: shaping("100,100,10", "100,300,20") + smp("a", "GET", "/a", "", ""), threads: 50, seconds: 20,
			want: &load.OpenModel{Rate: 100, Arrivals: load.Even, Connections: 50, Stages: []load.Stage{
				{Duration: 10 * time.Second, Target: 100}, {Duration: 10 * time.Second, Target: 200}}},
			notes: []string{"the stages are cut there"}},
		// A row that is not a number.
		{name: "shaping bad row", children: shaping("0,lots,10") + smp("a", "GET", "/a", "", ""), threads: 2, seconds: 5,
			skip: `row 1 of the load profile: the end RPS "lots" is not a number`},
		// Two rate timers: the first gives the rate.
		{name: "two", children: ctt("first", "600", 2) + ctt("second", "60", 2) + smp("a", "GET", "/a", "", ""), threads: 2, seconds: 5,
			want: &load.OpenModel{Rate: 10, Duration: 5 * time.Second, Arrivals: load.Even, Connections: 2},
			skip: `a second rate timer: the open model has one rate, given by Constant Throughput Timer "first"`},
		// 10 threads pausing 1s per iteration start at most 10 a second:
		// 100 iterations/s was out of JMeter's reach.
		{name: "not held", children: el("ConstantTimer", "think", "ConstantTimer.delay=1000") + ctt("ctt", "6000", 2) + smp("a", "GET", "/a", "", ""), threads: 10, seconds: 5,
			want:   &load.OpenModel{Rate: 100, Duration: 5 * time.Second, Arrivals: load.Even, Connections: 10},
			report: []string{"its 10 threads with 1s of Constant Timer per iteration could start at most 10 iterations/s before any response time: JMeter could not have held 100 iterations/s; showdown's open model does"}},
		// 100 threads pausing 100ms start at most 1,000 a second: held
		// while responses took under 0.9s.
		{name: "held", children: el("ConstantTimer", "think", "ConstantTimer.delay=100") + ctt("ctt", "6000", 2) + smp("a", "GET", "/a", "", ""), threads: 100, seconds: 5,
			want:   &load.OpenModel{Rate: 100, Duration: 5 * time.Second, Arrivals: load.Even, Connections: 100},
			report: []string{"could start at most 1,000 iterations/s before any response time, so JMeter would have held 100 iterations/s while an iteration's responses took under 900ms in all"}},
		// No pauses: the response time alone bounds the threads.
		{name: "no pauses", children: ctt("ctt", "30000", 2) + smp("a", "GET", "/a", "", ""), threads: 100, seconds: 5,
			want:   &load.OpenModel{Rate: 500, Duration: 5 * time.Second, Arrivals: load.Even, Connections: 100},
			report: []string{"with no pauses are bounded by the response time alone: JMeter held 500 iterations/s only while an iteration's responses took under 200ms in all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := threads(testPlan(tt.children), tt.threads, tt.seconds)
			res, err := Import("p.jmx", []byte(plan), Options{Properties: tt.props})
			if err != nil {
				t.Fatal(err)
			}
			var skipped []string
			for _, p := range res.Skipped {
				skipped = append(skipped, p.String())
			}
			if all := strings.Join(skipped, "\n"); tt.skip == "" && all != "" || !strings.Contains(all, tt.skip) {
				t.Errorf("skipped:\n%s\nwant %q", all, tt.skip)
			}
			o := res.Load.Open
			if tt.want == nil {
				if o != nil {
					t.Errorf("an open model %+v, want the closed one", o.Model())
				}
				return
			}
			if o == nil {
				t.Fatalf("the closed model, want %+v", *tt.want)
			}
			m := o.Model()
			if m.Rate != tt.want.Rate || m.Duration != tt.want.Duration || m.Arrivals != tt.want.Arrivals || m.Seed != tt.want.Seed ||
				m.Connections != tt.want.Connections || !slices.Equal(m.Stages, tt.want.Stages) {
				t.Errorf("model %+v, want %+v", m, *tt.want)
			}
			if errs := m.Validate(); len(errs) > 0 {
				t.Errorf("the model does not validate: %v", errs)
			}
			// The attack command says the same stages.
			if len(m.Stages) > 0 {
				st, err := load.ParseStages(o.StagesArg())
				if err != nil || !slices.Equal(st, m.Stages) {
					t.Errorf("--stages %s reads as %v (%v), want %v", o.StagesArg(), st, err, m.Stages)
				}
			}
			if len(res.Became) != 1 {
				t.Fatalf("became %v, want the timer", res.Became)
			}
			for _, w := range tt.report {
				if !strings.Contains(res.Became[0].Reason, w) {
					t.Errorf("became %q, want %q in it", res.Became[0].Reason, w)
				}
			}
			notes := strings.Join(res.Notes, "\n")
			for _, w := range tt.notes {
				if !strings.Contains(notes, w) {
					t.Errorf("notes lack %q:\n%s", w, notes)
				}
			}
		})
	}
}

// TestRateTimerMissingProperty: a throughput of ${__P(rate)} with no
// default needs -J rate=..., as a thread count does.
func TestRateTimerMissingProperty(t *testing.T) {
	plan := threads(testPlan(ctt("ctt", "${__P(rate)}", 2)+smp("a", "GET", "/a", "", "")), 2, 5)
	_, err := Import("p.jmx", []byte(plan), Options{})
	var mp *MissingPropertiesError
	if !errors.As(err, &mp) || len(mp.Properties) != 1 || mp.Properties[0].Name != "rate" || mp.Properties[0].Type != tagConstThroughput {
		t.Fatalf("got %v, want rate missing, read by the timer", err)
	}
	res, err := Import("p.jmx", []byte(plan), Options{Properties: map[string]string{"rate": "120"}})
	if err != nil || res.Load.Open == nil || res.Load.Open.Rate != 2 {
		t.Fatalf("with -J rate=120: %v, %+v", err, res)
	}
}
