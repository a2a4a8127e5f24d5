package wording

import (
	"fmt"
	"strconv"

	"github.com/showdownlab/showdown/internal/results"
)

// Slower words fail_if's slower_than on one arm: whether it failed the
// run, and why it did not (no significant difference, not within the
// precision, within the threshold, faster):
//
//	fail_if slower_than 5%: FAILED: b is 1.12× slower than a [1.08, 1.16] on throughput, the whole interval beyond 1.05×
func Slower(s results.Slower) string {
	head := "fail_if slower_than " + strconv.FormatFloat(100*s.Threshold, 'g', 4, 64) + "%: "
	limit := fmt.Sprintf("%.2f×", 1+s.Threshold)
	iv := fmt.Sprintf("%.2f× [%.2f, %.2f]", s.Ratio, s.Low, s.High)
	switch s.Outcome {
	case results.SlowerBeyond:
		return head + fmt.Sprintf("FAILED: %s is %.2f× slower than %s [%.2f, %.2f] on %s, the whole interval beyond %s", s.Arm, s.Ratio, s.Baseline, s.Low, s.High, s.Metric, limit)
	case results.SlowerWithin:
		return head + fmt.Sprintf("passed, within the threshold: %s is %.2f× slower than %s [%.2f, %.2f] on %s, the whole interval within %s", s.Arm, s.Ratio, s.Baseline, s.Low, s.High, s.Metric, limit)
	case results.SlowerFaster:
		return head + fmt.Sprintf("passed, faster: %s is %.2f× faster than %s [%.2f, %.2f] on %s", s.Arm, 1/s.Ratio, s.Baseline, 1/s.High, 1/s.Low, s.Metric)
	case results.SlowerSame:
		return head + fmt.Sprintf("passed, no significant difference: %s against %s, %s as slow on %s", s.Arm, s.Baseline, iv, s.Metric)
	}
	return head + fmt.Sprintf("passed, not within the precision: %s against %s, %s as slow on %s, reaches past %s without lying wholly beyond it (more starts, or a larger budget, would tell)", s.Arm, s.Baseline, iv, s.Metric, limit)
}
