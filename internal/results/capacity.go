package results

import "time"

// Capacity is one arm's capacity at a plan's objective (slo) on one
// workload: the highest open-model arrival rate at which the objective
// holds at steady state, found by bracketing then bisecting. Every probe
// is kept, so the latency-load curve is drawn from the same runs.
type Capacity struct {
	Workload string `json:"workload"`
	// Arm is the implementation id (with its core count when the plan
	// has cores: "go-stdlib@2").
	Arm string `json:"arm"`
	// Implementation is the arm's implementation id without its cores.
	Implementation string `json:"implementation"`
	// Cores is how many CPUs the service had (0: the plan's placement).
	Cores int `json:"cores,omitempty"`
	// Objective is the plan's slo as it reads ("p99 <= 10ms, errors <= 0.1%").
	Objective string `json:"objective"`
	// Rate is the capacity estimate (requests per second) and Low/High
	// its interval.
	Rate float64 `json:"rate"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// LowerBound marks a capacity the generator, not the service,
	// limited: the true capacity is at least Low; Reason says why.
	LowerBound bool   `json:"lower_bound,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Failed is the lowest rate that failed the objective, and FailedWhy
	// what failed there ("p99 14.2 ms > 10 ms", "errors 0.4% > 0.1%",
	// "generator late: p99 1.3 ms > 1 ms").
	Failed    float64 `json:"failed,omitempty"`
	FailedWhy string  `json:"failed_why,omitempty"`
	// RSSBytes is the service's resident memory at the highest passing
	// probe, for sizing.
	RSSBytes int64 `json:"rss_bytes,omitempty"`
	// Probes in the order they ran, over every start.
	Probes []Probe `json:"probes"`
}

// Probe is one open-model run of an arm at one arrival rate, judged
// against the objective.
type Probe struct {
	Start int       `json:"start"`
	At    time.Time `json:"at"`
	// Rate is the offered rate; Achieved what completed per second.
	Rate     float64 `json:"rate"`
	Achieved float64 `json:"achieved"`
	Seconds  float64 `json:"seconds"`
	Samples  int64   `json:"samples"`
	// ErrorRate is the share of requests that failed (0.001 is 0.1%).
	ErrorRate float64 `json:"error_rate"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p999_ms"`
	// LatenessP99Ms is the generator's send lateness p99.
	LatenessP99Ms float64 `json:"lateness_p99_ms"`
	// ServiceCPU is the service's CPU (percent of one CPU) and
	// GeneratorCPU the generator's (percent of its CPUs).
	ServiceCPU   float64 `json:"service_cpu"`
	GeneratorCPU float64 `json:"generator_cpu"`
	RSSBytes     int64   `json:"rss_bytes,omitempty"`
	// Pass is whether the objective held; Why names what failed, and
	// GeneratorLimited marks a probe the generator limited.
	Pass             bool   `json:"pass"`
	Why              string `json:"why,omitempty"`
	GeneratorLimited bool   `json:"generator_limited,omitempty"`
}
