// Package stats holds the few statistics showdown decides with: the mean,
// median and geometric mean,
// coefficient of variation and 95% confidence interval of a cell's trials,
// the interval of a ratio between two implementations (ratio.go), the
// ratio of two arms measured in interleaved rounds, judged from the pair's
// own rounds (rounds.go) or from the whole comparison's (comparison.go),
// what a time budget buys (budget.go), Welch's t-test that compare
// applies to two runs (welch.go), and the steady-state rule that ends an
// automatic warm-up.
package stats

import (
	"math"
	"slices"
)

// Mean is the arithmetic mean of xs (NaN for none).
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Median is the median of xs (NaN for none); xs is left as it was.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// GeoMean is the geometric mean of the positive values of xs (a figure of
// 0 is one not recorded); NaN for none.
func GeoMean(xs []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if x > 0 {
			sum += math.Log(x)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(sum / float64(n))
}

// StdDev is the sample standard deviation of xs (n-1; NaN under two).
func StdDev(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m, ss := Mean(xs), 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// CV is the coefficient of variation of xs: the sample standard deviation
// over the mean (NaN under two values or for a zero mean).
func CV(xs []float64) float64 {
	m := Mean(xs)
	if m == 0 {
		return math.NaN()
	}
	return StdDev(xs) / math.Abs(m)
}

// Slope is the least-squares slope of xs against their index (units per
// step; NaN under two values).
func Slope(xs []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 {
		return math.NaN()
	}
	mx, my := (n-1)/2, Mean(xs)
	var num, den float64
	for i, y := range xs {
		dx := float64(i) - mx
		num += dx * (y - my)
		den += dx * dx
	}
	return num / den
}

// ConfidenceInterval is a confidence interval around a mean.
type ConfidenceInterval struct {
	Mean, Low, High float64
	// N is how many values it comes from.
	N int
}

// HalfWidth is half the interval's width relative to its mean (0.03 is
// ±3%); NaN without an interval.
func (iv ConfidenceInterval) HalfWidth() float64 {
	if iv.N < 2 || iv.Mean == 0 {
		return math.NaN()
	}
	return (iv.High - iv.Low) / 2 / math.Abs(iv.Mean)
}

// Overlaps reports whether two intervals share any value; an interval of
// one value (no spread known) overlaps everything.
func (iv ConfidenceInterval) Overlaps(o ConfidenceInterval) bool {
	if iv.N < 2 || o.N < 2 {
		return true
	}
	return iv.Low <= o.High && o.Low <= iv.High
}

// CI95 is the 95% confidence interval of the mean of xs by Student's t
// (the values are independent trials: fresh process starts). Under two
// values Low and High equal the mean.
func CI95(xs []float64) ConfidenceInterval {
	iv := ConfidenceInterval{Mean: Mean(xs), N: len(xs)}
	iv.Low, iv.High = iv.Mean, iv.Mean
	if len(xs) < 2 {
		return iv
	}
	h := tQuantile975(len(xs)-1) * StdDev(xs) / math.Sqrt(float64(len(xs)))
	iv.Low, iv.High = iv.Mean-h, iv.Mean+h
	return iv
}

// t975 are Student's t 0.975 quantiles for 1..30 degrees of freedom.
var t975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// T975 is Student's t 0.975 quantile at df degrees of freedom (NaN under
// one): the half-width of a two-sided 95% interval in standard errors.
func T975(df int) float64 { return tQuantile975(df) }

func tQuantile975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(t975) {
		return t975[df-1]
	}
	return 1.96 + 2.4/float64(df) // within 0.002 of the table beyond 30
}

// Steady is the steady-state rule of an automatic warm-up, after Georges,
// Buytaert and Eeckhout (OOPSLA 2007): over a sliding window of the last
// Window one-second values of the live series (throughput in the closed
// model, median latency in the open one), the coefficient of variation is
// at most MaxCV and the least-squares trend across the window is at most
// MaxDrift of the window's mean. plans/README.md says why these values.
type Steady struct {
	Window   int
	MaxCV    float64
	MaxDrift float64
}

// Defaults of the steady-state rule.
const (
	DefaultSteadyWindow   = 10
	DefaultSteadyMaxCV    = 0.05
	DefaultSteadyMaxDrift = 0.05
)

// DefaultSteady is the rule the lab applies.
var DefaultSteady = Steady{Window: DefaultSteadyWindow, MaxCV: DefaultSteadyMaxCV, MaxDrift: DefaultSteadyMaxDrift}

// Holds reports whether the last Window values of series are steady, and
// the window's CV and drift (the trend over the window relative to its
// mean); false until the series is a window long.
func (r Steady) Holds(series []float64) (ok bool, cv, drift float64) {
	if len(series) < r.Window || r.Window < 2 {
		return false, math.NaN(), math.NaN()
	}
	w := series[len(series)-r.Window:]
	m := Mean(w)
	if m <= 0 {
		return false, math.NaN(), math.NaN()
	}
	cv = CV(w)
	drift = math.Abs(Slope(w)) * float64(r.Window-1) / m
	return cv <= r.MaxCV && drift <= r.MaxDrift, cv, drift
}
