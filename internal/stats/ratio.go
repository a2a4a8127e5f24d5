package stats

import "math"

// RatioInterval is a confidence interval of the ratio of two means.
type RatioInterval struct {
	// Ratio is mean(a) / mean(b).
	Ratio float64
	// Low and High bound the interval; Unbounded reports that b's mean is
	// not significantly different from zero, so no finite interval exists.
	Low, High float64
	Unbounded bool
	// N is the smaller sample's size; under two there is no interval and
	// Low and High equal Ratio.
	N int
}

// Contains reports whether v lies within the interval (an unbounded one
// contains everything; one without spread only its own ratio).
func (r RatioInterval) Contains(v float64) bool {
	return r.Unbounded || r.Low <= v && v <= r.High
}

// RatioCI95 is the 95% confidence interval of mean(a) / mean(b), a and b
// independent samples (per-trial figures of two implementations), by
// Fieller's theorem: the set of ratios r for which mean(a) - r mean(b) is
// not significantly different from zero, with Student's t at the
// Welch-Satterthwaite degrees of freedom of that difference. Unlike the
// delta method's symmetric interval it stays correct when b's mean is
// uncertain, and it says so (Unbounded) when b's interval includes zero.
func RatioCI95(a, b []float64) RatioInterval {
	ma, mb := Mean(a), Mean(b)
	out := RatioInterval{N: min(len(a), len(b))}
	if mb == 0 || out.N == 0 {
		// No ratio to speak of: every value is as likely (JSON holds no
		// infinities, so the bounds stay 0).
		out.Unbounded = true
		return out
	}
	out.Ratio = ma / mb
	out.Low, out.High = out.Ratio, out.Ratio
	if out.N < 2 {
		return out
	}
	va := variance(a) / float64(len(a)) // squared standard errors
	vb := variance(b) / float64(len(b))
	q := out.Ratio
	// Degrees of freedom of mean(a) - q mean(b) (Welch-Satterthwaite).
	num := va + q*q*vb
	den := va*va/float64(len(a)-1) + q*q*q*q*vb*vb/float64(len(b)-1)
	df := len(a) + len(b) - 2
	if den > 0 {
		df = max(1, int(math.Floor(num*num/den)))
	}
	t := tQuantile975(df)
	g := t * t * vb / (mb * mb)
	if g >= 1 {
		out.Unbounded = true
		return out
	}
	h := t / math.Abs(mb) * math.Sqrt(va*(1-g)+q*q*vb)
	out.Low, out.High = (q-h)/(1-g), (q+h)/(1-g)
	return out
}

// variance is the sample variance (n-1).
func variance(xs []float64) float64 {
	s := StdDev(xs)
	return s * s
}
