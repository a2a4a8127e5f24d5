package stats

import (
	"math"
)

// Trend is the no-remaining-trend rule of a warm-up: some window of the
// last MinWindow or more one-second values has a least-squares slope
// whose 95% interval's upper end in the direction of warming (throughput
// rising, or latency falling) is at most MaxRise, and whose half-width is
// at most MaxHalf (0: any). Both are relative to the window's mean and
// per Per seconds.
//
// An interval that merely holds 0 is no evidence of steady state on a
// noisy machine: twenty seconds of 5% noise give a slope interval of
// about ±4% per 10 s, which holds 0 at once. An upper end under MaxRise
// asks more: a window long enough for the noise measured to be averaged
// out (about 50 s at 5% per second for 1% per 10 s, 20 s on a quiet
// machine), or one whose throughput visibly fell. MaxHalf keeps the
// second case from ending a warm-up on a short window that merely ended
// in one of the machine's dips: a window as imprecise as ±3% per 10 s
// passes only when its estimate fell 2% per 10 s or more. The residuals'
// lag-1 autocorrelation, where positive (a machine whose speed wanders
// over seconds), widens the interval, since it leaves fewer independent
// values than seconds.
type Trend struct {
	MinWindow int
	MaxRise   float64
	MaxHalf   float64
	Per       float64
}

// Defaults of the trend rule: a rise of at most 1% of the mean per 10 s,
// judged on an interval at most ±3% per 10 s wide, over at least 20 s.
// plans/README.md ("Warm-up until steady state") says why.
const (
	DefaultTrendMinWindow = 20
	DefaultTrendMaxRise   = 0.01
	DefaultTrendMaxHalf   = 0.03
	DefaultTrendPer       = 10
)

// DefaultTrend is the rule the lab applies.
var DefaultTrend = Trend{MinWindow: DefaultTrendMinWindow, MaxRise: DefaultTrendMaxRise, MaxHalf: DefaultTrendMaxHalf, Per: DefaultTrendPer}

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

// Holds applies the rule to the series' last values, over one window:
// as long as the series' per-second noise needs for a slope interval
// MaxHalf wide (NoiseWindow), at least MinWindow. The window's length
// follows from the noise alone, never from a slope: trying windows of
// every length would find one that fell, or one whose noise happened to
// look small. warming says which direction is warming: +1 for
// throughput, -1 for latency. The zero TrendFit (Window 0) means the
// series is shorter than that window or has no positive mean.
func (t Trend) Holds(series []float64, warming float64) TrendFit {
	w := t.NoiseWindow(series)
	if w == 0 || w > len(series) {
		return TrendFit{}
	}
	return t.fit(series[len(series)-w:], warming)
}

// NoiseHorizon is how many of a series' last values NoiseWindow measures
// the noise over.
const NoiseHorizon = 120

// NoiseWindow is the window the rule judges a series on: the length
// whose slope interval is about MaxHalf wide at the series' noise, at
// least MinWindow (MinWindow with MaxHalf 0; 0 without a positive
// mean). The noise is the spread of the last NoiseHorizon values'
// differences from one second to the next (their MAD, so a stalled
// second does not inflate it), relative to the last MinWindow values'
// mean: a trend or a warm-up's climb barely moves differences, while
// the values' own spread would count them as noise.
func (t Trend) NoiseWindow(series []float64) int {
	mw := max(t.MinWindow, 3)
	if len(series) < mw {
		return mw
	}
	m := Mean(series[len(series)-mw:])
	if !(m > 0) {
		return 0
	}
	if t.MaxHalf <= 0 {
		return mw
	}
	tail := series[max(0, len(series)-NoiseHorizon):]
	d := make([]float64, len(tail)-1)
	for i := range d {
		d[i] = tail[i+1] - tail[i]
	}
	return t.WindowFor(1.4826 * mad(d) / math.Sqrt2 / m)
}

// WindowFor is the window NoiseWindow gives a series of white noise cv
// per second (relative to its mean): the length whose slope interval is
// MaxHalf wide, at least MinWindow.
func (t Trend) WindowFor(cv float64) int {
	mw := max(t.MinWindow, 3)
	if t.MaxHalf <= 0 || !(cv > 0) {
		return mw
	}
	// Half-width = t * cv * sqrt(12 / w^3) * Per, with t about 2.
	need := math.Cbrt(12 * math.Pow(2*cv*t.Per/t.MaxHalf, 2))
	return max(mw, int(math.Ceil(need)))
}

// mad is the median absolute deviation of xs from their median (0 for
// none; median, in comparison.go, is shared).
func mad(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	med := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
	}
	return Median(dev)
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
	f.Holds = f.High <= t.MaxRise
	return f
}
