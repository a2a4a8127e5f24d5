package stats

import (
	"math"
	"testing"
)

// TestBudget checks that the design a budget buys fits in it, that no
// other design that fits does better for its worst pair, and what it
// chooses where starts are dear or start effects large.
func TestBudget(t *testing.T) {
	pooled := RoundRatio{BetweenSD: 0.045, WithinSD: 0.12, DFPerStart: 5}
	alone := RoundRatio{BetweenSD: 0.045, WithinSD: 0.12}
	quiet := RoundRatio{BetweenSD: 0.01, WithinSD: 0.03, DFPerStart: 5}
	cases := []struct {
		name                 string
		pairs                []RoundRatio
		seconds              float64
		startCost, roundCost float64
	}{
		// The noisy day's pooled variances, 12 minutes, a start of six
		// arms 60 s to warm, a round of six 2 s arms 18 s.
		{"noisy day, pooled", []RoundRatio{pooled, quiet}, 720, 60, 18},
		// The same pair judged alone: t with one degree of freedom per
		// start beyond the first makes starts worth more.
		{"noisy day, pair alone", []RoundRatio{alone}, 720, 60, 18},
		// Dear starts: rounds instead.
		{"dear starts", []RoundRatio{pooled}, 1800, 300, 18},
	}
	for _, c := range cases {
		s, n, hw, ok := Budget(c.pairs, c.seconds, c.startCost, c.roundCost, 3, 20)
		if !ok {
			t.Fatalf("%s: nothing fits", c.name)
		}
		t.Logf("%s: %d starts of %d rounds, ±%.1f%%", c.name, s, n, 100*hw)
		if cost := float64(s) * (c.startCost + float64(n)*c.roundCost); cost > c.seconds {
			t.Errorf("%s: %d starts of %d rounds cost %.0f s, over the budget of %.0f", c.name, s, n, cost, c.seconds)
		}
		for s2 := 2; s2 <= 20; s2++ {
			for n2 := 3; float64(s2)*(c.startCost+float64(n2)*c.roundCost) <= c.seconds; n2++ {
				worst := 0.0
				for _, p := range c.pairs {
					worst = math.Max(worst, p.HalfWidthAt(s2, n2))
				}
				if worst < hw-1e-12 {
					t.Errorf("%s: %d starts of %d rounds give ±%.2f%%, better than the budget's %d of %d (±%.2f%%)", c.name, s2, n2, 100*worst, s, n, 100*hw)
				}
			}
		}
	}
	cheap, _, _, _ := Budget([]RoundRatio{pooled}, 1800, 60, 18, 3, 20)
	dear, _, _, _ := Budget([]RoundRatio{pooled}, 1800, 300, 18, 3, 20)
	if dear >= cheap {
		t.Errorf("dear starts bought %d starts, cheap ones %d: dear starts should buy rounds instead", dear, cheap)
	}
	if _, _, _, ok := Budget([]RoundRatio{pooled}, 100, 60, 18, 3, 20); ok {
		t.Errorf("100 s bought a design, want none: two starts of three rounds cost 228 s")
	}
	// HalfWidthAt is Need's arithmetic: what Need asks for reaches it.
	if s, n, ok := pooled.Need(0.10, 200); !ok || pooled.HalfWidthAt(s, n) > 0.10 {
		t.Errorf("Need asked for %d starts of %d rounds (%v), which give ±%.3f", s, n, ok, pooled.HalfWidthAt(s, n))
	}
}
