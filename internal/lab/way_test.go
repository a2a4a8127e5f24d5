package lab

import (
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/measure/measuretest"
)

// TestWayOf: the plan's fields choose its way of measuring.
func TestWayOf(t *testing.T) {
	const base = "name: f\nworkloads: [string]\nload:\n  levels: [10]\n  duration: 1s\n"
	for _, tc := range []struct {
		name, plan string
		want       way
		why        string
	}{
		// An objective asks for a capacity search, whatever else.
		{"slo", "implementations: [go-stdlib, java-spring]\nslo: {p99: 10ms}\n", byCapacity, ""},
		// Two warm arms: interleaved rounds.
		{"two arms", "implementations: [go-stdlib, java-spring]\n", inRounds, ""},
		// Two arms the plan keeps apart: sequential, and why.
		{"interleave false", "implementations: [go-stdlib, java-spring]\ninterleave: false\n", oneAfterAnother, "the plan says interleave: false"},
		// A cold variant cannot be kept warm: sequential, and why.
		{"cold", "implementations: [go-stdlib, {service: java-spring, warmup: none}]\n", oneAfterAnother, "warmup: none"},
		// One arm: nothing to interleave, and nothing to explain.
		{"one arm", "implementations: [go-stdlib]\n", oneAfterAnother, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := wayOf(measuretest.Plan(t, base+tc.plan))
			if got != tc.want {
				t.Errorf("wayOf = %d, want %d", got, tc.want)
			}
			if tc.why == "" && why != "" || !strings.Contains(why, tc.why) {
				t.Errorf("why = %q, want %q", why, tc.why)
			}
		})
	}
}
