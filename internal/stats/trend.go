package stats

import "math"

// Trend is the no-remaining-trend rule of a warm-up: some window of the
// last MinWindow or more one-second values has a least-squares slope
// whose 95% interval is narrow (its half-width at most MaxRise) and whose
// upper end in the direction of warming (throughput rising, or latency
// falling) is at most MaxRise. Both are relative to the window's mean
// and per Per seconds.
//
// An interval that merely holds 0 is no evidence of steady state on a
// noisy machine: ten seconds of 5% noise give a slope interval of about
// ±13% per 10 s, which holds 0 at once. Asking the interval to be
// narrower than MaxRise makes the window as long as the noise measured
// demands (about 50 s at 5% per second for 1% per 10 s, 20 s on a
// quiet machine), and the rule then holds only where the series has no
// rise of that size left in it. The residuals' lag-1 autocorrelation,
// where positive (a machine whose speed drifts over seconds), widens the
// interval as it shrinks the values' independent count.
type Trend struct {
	MinWindow int
	MaxRise   float64
	Per       float64
}

// Defaults of the trend rule: a rise of at most 1% of the mean per 10 s.
// plans/README.md ("Warm-up until steady state") says why.
const (
	DefaultTrendMinWindow = 20
	DefaultTrendMaxRise   = 0.01
	DefaultTrendPer       = 10
)

// DefaultTrend is the rule the lab applies.
var DefaultTrend = Trend{MinWindow: DefaultTrendMinWindow, MaxRise: DefaultTrendMaxRise, Per: DefaultTrendPer}

// TrendFit is the trend rule's figures over one window of a series.
type TrendFit struct {
	// Window is the window's length (values, one a second) and Mean its
	// mean.
	Window int
	Mean   float64
	// Rise is the slope in the direction of warming, relative to Mean
	// and per the rule's Per seconds, and Low and High its 95% interval.
	Rise, Low, High float64
	// Holds reports that the window satisfies the rule.
	Holds bool
}

// Holds applies the rule to the windows that end at the series' last
// value, from MinWindow values to the whole series, and returns the
// shortest window that satisfies it (the most recent evidence), or, when
// none does, the window whose interval's upper end is the lowest.
// warming says which direction is warming: +1 for throughput, -1 for
// latency. The zero TrendFit (Window 0) means the series is shorter than
// MinWindow or has no positive mean.
func (t Trend) Holds(series []float64, warming float64) TrendFit {
	var best TrendFit
	for w := max(t.MinWindow, 3); w <= len(series); w++ {
		f := t.fit(series[len(series)-w:], warming)
		if f.Window == 0 {
			continue
		}
		if f.Holds {
			return f
		}
		if best.Window == 0 || f.High < best.High {
			best = f
		}
	}
	return best
}

// fit is the rule on one window.
func (t Trend) fit(w []float64, warming float64) TrendFit {
	n := len(w)
	m := Mean(w)
	if n < 3 || !(m > 0) {
		return TrendFit{}
	}
	mx := float64(n-1) / 2
	var sxx, sxy float64
	for i, y := range w {
		dx := float64(i) - mx
		sxx += dx * dx
		sxy += dx * (y - m)
	}
	b := sxy / sxx
	var ss, lag, prev float64
	for i, y := range w {
		r := y - (m + b*(float64(i)-mx))
		ss += r * r
		if i > 0 {
			lag += r * prev
		}
		prev = r
	}
	// Positive lag-1 autocorrelation rho leaves n(1-rho)/(1+rho)
	// independent values: the slope's variance grows by (1+rho)/(1-rho)
	// and the degrees of freedom shrink alike.
	rho := 0.0
	if ss > 0 {
		rho = min(max(lag/ss, 0), 0.9)
	}
	inflate := (1 + rho) / (1 - rho)
	df := max(int(float64(n)/inflate)-2, 1)
	se := math.Sqrt(ss / float64(n-2) / sxx * inflate)
	scale := warming * t.Per / m
	rise, half := b*scale, T975(df)*se*math.Abs(scale)
	f := TrendFit{Window: n, Mean: m, Rise: rise, Low: rise - half, High: rise + half}
	f.Holds = half <= t.MaxRise && f.High <= t.MaxRise
	return f
}
