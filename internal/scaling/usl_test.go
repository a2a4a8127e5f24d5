package scaling

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// usl is the law's curve.
func usl(lambda, sigma, kappa, n float64) float64 {
	return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
}

// synthetic are starts × counts figures on the law's curve, each with
// cv multiplicative noise, and every figure of a start moved alike by a
// share of sd startSD.
func synthetic(rng *rand.Rand, lambda, sigma, kappa, cv, startSD float64, counts []int, starts int) []Point {
	var pts []Point
	for s := 1; s <= starts; s++ {
		u := 1 + startSD*rng.NormFloat64()
		for _, n := range counts {
			pts = append(pts, Point{Cores: n, Start: s, Figure: u * usl(lambda, sigma, kappa, float64(n)) * (1 + cv*rng.NormFloat64())})
		}
	}
	return pts
}

// TestCoverage checks, over many synthetic runs, how often the intervals
// hold the true peak and the true capacity at 16 cores: 90-98% is honest
// for a 95% interval at this many trials.
func TestCoverage(t *testing.T) {
	const trials = 1000
	const lambda = 20_000.0
	counts := []int{1, 2, 4, 8}
	for _, tt := range []struct {
		name         string
		sigma, kappa float64
		starts       int
		// bounded: the intervals must be bounded in 95% of trials or more
		// (so that coverage is not bought with open intervals).
		bounded bool
		// cv is each figure's own noise, startSD a start's, shared by its
		// figures (0 in the cases: 3% per figure).
		cv, startSD float64
	}{
		// N* = 21.8, far past the 8 cores measured: κ is seldom told from
		// zero, so N*'s interval is mostly open above ("at least L").
		{"σ 0.05, κ 0.002, two starts", 0.05, 0.002, 2, false, 0.03, 0},
		{"σ 0.05, κ 0.002, four starts", 0.05, 0.002, 4, false, 0.03, 0},
		// N* = 9.9, just past 8: the curve bends within the counts.
		{"σ 0.02, κ 0.01, two starts", 0.02, 0.01, 2, false, 0.03, 0},
		{"σ 0.02, κ 0.01, four starts", 0.02, 0.01, 4, true, 0.03, 0},
		// One start: one residual degree of freedom, t = 12.7.
		{"σ 0.05, κ 0.002, one start", 0.05, 0.002, 1, false, 0.03, 0},
		{"σ 0.02, κ 0.01, one start", 0.02, 0.01, 1, false, 0.03, 0},
		// A start that moves all its figures alike (3%, each figure 1.5%
		// on its own), which the fit does not model: the residual holds
		// it, so N* and X(16), shapes and extrapolations, are covered
		// more often than 95% (only 90% is checked), while λ, which it
		// moves whole, is covered less (logged, not checked).
		{"σ 0.02, κ 0.01, four starts, a start effect", 0.02, 0.01, 4, false, 0.015, 0.03},
	} {
		rng := rand.New(rand.NewPCG(35, uint64(tt.starts)*1000+uint64(tt.kappa*1e4)+uint64(tt.startSD*1e3)))
		peak := math.Sqrt((1 - tt.sigma) / tt.kappa)
		at16 := usl(lambda, tt.sigma, tt.kappa, 16)
		var peakIn, capIn, open, capOpen, outside, lambdaIn, sigmaIn, kappaIn, lack int
		for range trials {
			f, err := New("synthetic", synthetic(rng, lambda, tt.sigma, tt.kappa, tt.cv, tt.startSD, counts, tt.starts))
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if f.Outside != "" {
				outside++
			}
			if f.LackOfFit < 0.05 {
				lack++
			}
			if f.PeakCI.Contains(peak) {
				peakIn++
			}
			if f.PeakCI.Open() {
				open++
			}
			_, iv := f.At(16)
			if iv.Contains(at16) {
				capIn++
			}
			if !iv.Known() || iv.Open() {
				capOpen++
			}
			if f.LambdaCI.Contains(lambda) {
				lambdaIn++
			}
			if f.SigmaCI.Contains(tt.sigma) {
				sigmaIn++
			}
			if f.KappaCI.Contains(tt.kappa) {
				kappaIn++
			}
		}
		rate := func(k int) float64 { return float64(k) / float64(trials) }
		t.Logf("%s (N* %.1f, X(16) %.0f): N* within its interval %.1f%% (open above %.1f%%), X(16) %.1f%%; λ %.1f%%, σ %.1f%%, κ %.1f%%; outside the law %.1f%%, lack of fit at p < 0.05 %.1f%% (%d trials)",
			tt.name, peak, at16, 100*rate(peakIn), 100*rate(open), 100*rate(capIn), 100*rate(lambdaIn), 100*rate(sigmaIn), 100*rate(kappaIn), 100*rate(outside), 100*rate(lack), trials)
		for _, c := range []struct {
			what string
			got  float64
		}{{"N*", rate(peakIn)}, {"capacity at 16", rate(capIn)}} {
			if c.got < 0.90 || c.got > 0.98 && tt.startSD == 0 {
				t.Errorf("%s: %s within its interval in %.1f%% of trials; want 90-98%%", tt.name, c.what, 100*c.got)
			}
		}
		if tt.bounded && (rate(open) > 0.05 || rate(capOpen) > 0.05) {
			t.Errorf("%s: N*'s interval open in %.1f%% of trials, X(16)'s in %.1f%%; want 5%% at most", tt.name, 100*rate(open), 100*rate(capOpen))
		}
	}
}

// TestFigures fits measured and made-up figures whose answer is known.
func TestFigures(t *testing.T) {
	one := func(figs map[int]float64) []Point {
		var pts []Point
		for _, n := range []int{1, 2, 4, 8} {
			if f, ok := figs[n]; ok {
				pts = append(pts, Point{Cores: n, Start: 1, Figure: f})
			}
		}
		return pts
	}
	for _, tt := range []struct {
		name string
		pts  []Point
		// want: the parameters and peak (NaN: none), the basis and the
		// residual's degrees of freedom, and a phrase of Outside ("":
		// within the law).
		sigma, kappa, peak float64
		basis              Basis
		df                 int
		outside            string
		// tol is how close the parameters must come, relative.
		tol float64
	}{
		// rust-axum, lent machine, 2026-11-26 (bench/README.md "Cores"):
		// one start, three counts, so three figures for three parameters.
		// The curve bends (κ > 0) and would peak at about 10 cores, past
		// the 4 measured; with no residual there is no interval.
		{"rust-axum 2026-11-26", one(map[int]float64{1: 80_851, 2: 156_237, 4: 277_840}), 0.01529, 0.009843, 10.00, Exact, 0, "", 1e-3},
		// go-stdlib, same run: from 2 to 4 cores it gains per core (78%
		// against 73% of linear), which the law's curve cannot do.
		{"go-stdlib 2026-11-26", one(map[int]float64{1: 44_880, 2: 65_285, 4: 140_255}), 0.6565, -0.1408, math.NaN(), Exact, 0, "κ = -0.141 < 0", 1e-3},
		// Superlinear from the first core, each figure on a curve with
		// σ = -0.1, κ = 0.01, two starts: σ's interval lies below 0.
		{"superlinear", append(one(map[int]float64{1: 1000, 2: usl(1000, -0.1, 0.01, 2) * 1.01, 4: usl(1000, -0.1, 0.01, 4), 8: usl(1000, -0.1, 0.01, 8) * 0.99}),
			Point{Cores: 1, Start: 2, Figure: 1010}, Point{Cores: 2, Start: 2, Figure: usl(1000, -0.1, 0.01, 2) * 0.99}, Point{Cores: 4, Start: 2, Figure: usl(1000, -0.1, 0.01, 4) * 1.01}, Point{Cores: 8, Start: 2, Figure: usl(1000, -0.1, 0.01, 8)}),
			-0.1, 0.01, math.NaN(), Residual, 5, "σ = -0.101 [-0.112, -0.0899], below 0", 0.05},
		// Exactly on the curve (σ 0.05, κ 0.002) at four counts: one
		// residual degree of freedom and no scatter.
		{"on the curve", one(map[int]float64{1: 20_000, 2: usl(20_000, 0.05, 0.002, 2), 4: usl(20_000, 0.05, 0.002, 4), 8: usl(20_000, 0.05, 0.002, 8)}),
			0.05, 0.002, math.Sqrt(0.95 / 0.002), Residual, 1, "", 1e-3},
	} {
		f, err := New(tt.name, tt.pts)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		close := func(got, want float64) bool {
			return math.IsNaN(got) && math.IsNaN(want) || math.Abs(got-want) <= tt.tol*math.Max(0.01, math.Abs(want))
		}
		if !close(f.Sigma, tt.sigma) || !close(f.Kappa, tt.kappa) || !close(f.Peak, tt.peak) {
			t.Errorf("%s: got σ %.5g, κ %.5g, N* %.4g; want %.5g, %.5g, %.4g", tt.name, f.Sigma, f.Kappa, f.Peak, tt.sigma, tt.kappa, tt.peak)
		}
		if f.Basis != tt.basis || f.DF != tt.df {
			t.Errorf("%s: got basis %s with %d df, want %s with %d", tt.name, f.Basis, f.DF, tt.basis, tt.df)
		}
		if got := f.Outside; (got == "") != (tt.outside == "") || !strings.Contains(got, tt.outside) {
			t.Errorf("%s: outside: got %q, want %q", tt.name, got, tt.outside)
		}
		if tt.basis == Exact && (f.SigmaCI.Known() || f.PeakCI.Known()) {
			t.Errorf("%s: an exact fit has intervals: σ %v, N* %v", tt.name, f.SigmaCI, f.PeakCI)
		}
		x16, _ := f.At(16)
		t.Logf("%s: λ %.0f %v, σ %.4f %v, κ %.5f %v, N* %.2f %v, X(16) %.0f; basis %s, df %d; outside: %q",
			tt.name, f.Lambda, f.LambdaCI, f.Sigma, f.SigmaCI, f.Kappa, f.KappaCI, f.Peak, f.PeakCI, x16, f.Basis, f.DF, f.Outside)
	}
}

// curve are four starts' figures exactly on the law's curve at 1, 2, 4
// and 8 cores, each start a share off the curve in turn (+1%, −1%, +1%,
// −1% by count, shifted by start), so the fit has a small scatter.
func curve(lambda, sigma, kappa float64) []Point {
	var pts []Point
	for s := 0; s < 4; s++ {
		for i, n := range []int{1, 2, 4, 8} {
			off := 0.01
			if (i+s)%2 == 1 {
				off = -0.01
			}
			pts = append(pts, Point{Cores: n, Start: s + 1, Figure: usl(lambda, sigma, kappa, float64(n)) * (1 + off)})
		}
	}
	return pts
}

func TestCross(t *testing.T) {
	// fast-start peaks early (σ 0.02, κ 0.01); slow-start starts at half
	// its λ and scales almost linearly: it passes fast-start where
	// 20000n/(1+0.02(n−1)+0.01n(n−1)) = 10000n/(1+0.001(n−1)).
	fast, err := New("fast-start", curve(20_000, 0.02, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	slow, err := New("slow-start", curve(10_000, 0.001, 0))
	if err != nil {
		t.Fatal(err)
	}
	// The true n solves 2(1+0.001(n−1)) = 1+0.02(n−1)+0.01n(n−1), that
	// is 0.01n² + 0.008n − 1.018 = 0: about 9.70.
	want := (-0.008 + math.Sqrt(0.008*0.008+4*0.01*1.018)) / (2 * 0.01)
	for _, tt := range []struct {
		name       string
		lo, hi     float64
		found      int
		passer     string
		open, none bool
	}{
		// Over 1..32 the slow start passes the fast one once.
		{"1..32", 1, 32, 1, "slow-start", false, false},
		// Not within 1..4: the fast start leads throughout, and the curves
		// are apart.
		{"1..4", 1, 4, 0, "", false, true},
	} {
		got := Cross(fast, slow, tt.lo, tt.hi)
		if len(got.Found) != tt.found {
			t.Fatalf("%s: got %d crossings (%+v), want %d", tt.name, len(got.Found), got, tt.found)
		}
		if tt.found > 0 {
			c := got.Found[0]
			if c.Passer != tt.passer || math.Abs(c.At-want) > 0.05*want || !c.CI.Contains(want) || c.HighOpen != tt.open {
				t.Errorf("%s: got %+v, want %s passing at about %.2f, within its interval", tt.name, c, tt.passer, want)
			}
			t.Logf("%s: %s passes %s at %.2f cores [%.2f, %.2f]", tt.name, c.Passer, c.Passed, c.At, c.CI.Low, c.CI.High)
		}
		if tt.none && got.Close.Known() {
			t.Errorf("%s: got the curves close at %v, want them apart", tt.name, got.Close)
		}
	}
}

func TestCoresFor(t *testing.T) {
	f, err := New("s", curve(20_000, 0.02, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	peak, _ := f.At(f.Peak)
	for _, tt := range []struct {
		name  string
		rate  float64
		cores float64 // NaN: not reached
		open  bool
	}{
		// Half a core's worth: a share of one core.
		{"below one core", 10_000, 0.5, false},
		// X(4) on the curve: 80000/(1+0.06+0.12).
		{"at four cores", usl(20_000, 0.02, 0.01, 4), 4, false},
		// Past the peak of about 84,000 at 9.9 cores: one process never
		// carries it.
		{"past the peak", 100_000, math.NaN(), true},
	} {
		got := f.CoresFor(tt.rate, 32)
		if math.IsNaN(tt.cores) != math.IsNaN(got.Cores) || !math.IsNaN(tt.cores) && math.Abs(got.Cores-tt.cores) > 0.05*tt.cores {
			t.Errorf("%s: got %.3f cores, want %.3f", tt.name, got.Cores, tt.cores)
		}
		if !math.IsNaN(tt.cores) && !(got.Band.Low <= got.Cores && got.Cores <= got.Band.High) {
			t.Errorf("%s: got %.3f cores outside its band %v", tt.name, got.Cores, got.Band)
		}
		if tt.open && (got.Band.Known() && !got.Band.Open() || math.Abs(got.Top-peak) > 0.01*peak) {
			t.Errorf("%s: got band %v and top %.0f, want no band or an open one, and the peak %.0f", tt.name, got.Band, got.Top, peak)
		}
	}
}

// TestRoundsBasis: one start at three counts leaves no residual; its
// rounds give the intervals, marked as holding the rounds' noise only.
func TestRoundsBasis(t *testing.T) {
	pts := []Point{
		{Cores: 1, Start: 1, Figure: 20_000, Rounds: []float64{19_800, 20_200, 20_000}},
		{Cores: 2, Start: 1, Figure: 38_000, Rounds: []float64{37_600, 38_400, 38_000}},
		{Cores: 4, Start: 1, Figure: 68_000, Rounds: []float64{67_300, 68_700, 68_000}},
	}
	f, err := New("rounds", pts)
	if err != nil {
		t.Fatal(err)
	}
	if f.Basis != Rounds || f.DF != 6 || !f.SigmaCI.Contains(f.Sigma) || !f.KappaCI.Contains(f.Kappa) {
		t.Errorf("got basis %s with %d df, σ %v %v, κ %v %v; want rounds with 6 df, each within its interval", f.Basis, f.DF, f.Sigma, f.SigmaCI, f.Kappa, f.KappaCI)
	}
	// Without the rounds: no interval at all.
	for i := range pts {
		pts[i].Rounds = nil
	}
	if f, _ := New("bare", pts); f.Basis != Exact || f.KappaCI.Known() {
		t.Errorf("without rounds: got basis %s, κ %v; want exact, no interval", f.Basis, f.KappaCI)
	}
}

func TestBadFigures(t *testing.T) {
	for _, tt := range []struct {
		name string
		pts  []Point
		want string
	}{
		// Two counts cannot hold three parameters.
		{"two counts", []Point{{Cores: 1, Figure: 1}, {Cores: 2, Figure: 2}, {Cores: 2, Start: 2, Figure: 2}}, "three counts or more"},
		// A zero figure (a failed start) is not a figure.
		{"zero", []Point{{Cores: 1, Figure: 1}, {Cores: 2, Figure: 0}, {Cores: 4, Figure: 3}}, "figure 2 (0 at 2 cores)"},
		{"no cores", []Point{{Cores: 0, Figure: 1}, {Cores: 2, Figure: 2}, {Cores: 4, Figure: 3}}, "figure 1"},
	} {
		_, err := New("s", tt.pts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}

func TestLackOfFit(t *testing.T) {
	twice := func(figs ...float64) []Point {
		var pts []Point
		for s, off := range []float64{1.01, 0.99} {
			for i, n := range []int{1, 2, 4, 8} {
				// The starts swap sides from count to count.
				o := off
				if i%2 == 1 {
					o = 2 - off
				}
				pts = append(pts, Point{Cores: n, Start: s + 1, Figure: figs[i] * o})
			}
		}
		return pts
	}
	for _, tt := range []struct {
		name string
		pts  []Point
		// lack: p below 0.01; else above 0.05.
		lack bool
	}{
		// On the curve, the starts 1% either side: nothing to doubt.
		{"on the curve", twice(usl(1000, 0.05, 0.01, 1), usl(1000, 0.05, 0.01, 2), usl(1000, 0.05, 0.01, 4), usl(1000, 0.05, 0.01, 8)), false},
		// A dip at 2 cores that both starts agree on, as go-stdlib's
		// 2026-11-26 figures have: no curve of the law passes it.
		{"a dip at 2", twice(1000, 1450, 3100, 5200), true},
		// One start: no pure error to judge by.
		{"one start", twice(1000, 1450, 3100, 5200)[:4], false},
	} {
		f, err := New(tt.name, tt.pts)
		if err != nil {
			t.Fatal(err)
		}
		p := f.LackOfFit
		t.Logf("%s: lack-of-fit p %.3g; outside: %q", tt.name, p, f.Outside)
		if tt.lack && !(p < 0.01) || !tt.lack && p < 0.05 {
			t.Errorf("%s: got lack-of-fit p %.3g, want it %s", tt.name, p, map[bool]string{true: "below 0.01", false: "not below 0.05 (or none)"}[tt.lack])
		}
	}
}
