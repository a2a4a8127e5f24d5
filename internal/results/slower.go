package results

// The outcomes of fail_if's slower_than on one arm against the baseline
// (Slower.Outcome).
const (
	// SlowerBeyond: the whole interval lies beyond the threshold; the
	// run fails.
	SlowerBeyond = "beyond"
	// SlowerUnsure: the interval reaches past the threshold but not
	// wholly: not within the precision to tell.
	SlowerUnsure = "not within the precision"
	// SlowerSame: the interval holds 1 and stays within the threshold.
	SlowerSame = "no significant difference"
	// SlowerWithin: slower, but the whole interval is within the
	// threshold.
	SlowerWithin = "within the threshold"
	// SlowerFaster: the whole interval says the arm is faster.
	SlowerFaster = "faster"
)

// Slower is fail_if's slower_than judged on one arm of a comparison
// against the plan's baseline arm: how many times slower Arm is than
// Baseline on the verdict's metric (Baseline's throughput over Arm's, or
// Arm's p99 over Baseline's), with the 95% interval, and whether the
// interval lies wholly beyond 1 + Threshold (Crossed).
type Slower struct {
	Baseline  string  `json:"baseline"`
	Arm       string  `json:"arm"`
	Metric    string  `json:"metric"`
	Threshold float64 `json:"threshold"`
	Ratio     float64 `json:"ratio"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	Outcome   string  `json:"outcome"`
	Crossed   bool    `json:"crossed"`
}

// CrossedSlower returns the slower_than judgements of a run that lie
// wholly beyond their threshold: what makes `showdown run` exit 3.
func CrossedSlower(r *Run) []Slower {
	var out []Slower
	for _, c := range r.Comparisons {
		if c.Verdict == nil {
			continue
		}
		for _, s := range c.Verdict.FailIf {
			if s.Crossed {
				out = append(out, s)
			}
		}
	}
	return out
}
