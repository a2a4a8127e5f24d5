package sequential

import (
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/stats"
)

// TargetHalfWidth is how precise `trials: auto` makes every cell: the 95%
// confidence interval of its throughput across trials within ±3% of the
// mean.
const TargetHalfWidth = 0.03

// Precise reports whether every cell measured so far has its throughput
// interval within TargetHalfWidth; a cell with fewer than two measured
// trials is not.
func Precise(rec *results.Run) bool {
	for _, c := range results.Cells(rec) {
		var tp []float64
		for _, lr := range c.Levels {
			tp = append(tp, lr.Total.Throughput)
		}
		hw := stats.CI95(tp).HalfWidth()
		if !(hw <= TargetHalfWidth) {
			return false
		}
	}
	return true
}
