package lab

import (
	"math"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// thresholds checks the plan's fail_if expressions (validated when the
// plan was parsed) on one level's result, with the same rules as
// `showdown attack --fail-if`. A threshold that cannot be measured (a
// step label the scenario does not have) counts as crossed.
func thresholds(exprs []string, res *load.Result) []results.ThresholdVerdict {
	var out []results.ThresholdVerdict
	for _, e := range exprs {
		v := results.ThresholdVerdict{Expr: e}
		t, err := load.ParseThreshold(e)
		if err == nil {
			v.Crossed, v.Measured, err = t.Crossed(res)
		}
		if err != nil {
			v.Crossed, v.Error = true, err.Error()
		}
		v.Measured = math.Round(v.Measured*1000) / 1000
		out = append(out, v)
	}
	return out
}
