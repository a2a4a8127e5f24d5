package lab

import (
	"context"
	"strings"
	"testing"

	"github.com/showdownlab/showdown/internal/faults"
	"github.com/showdownlab/showdown/internal/neighbour"
	"github.com/showdownlab/showdown/internal/noise"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/verify"
	"github.com/showdownlab/showdown/load"
)

// testSteps are the real steps, as cmd/showdown passes them.
var testSteps = Steps{
	Noise: func(ctx context.Context, cpus []int, seconds int) (results.NoiseFloor, error) {
		f, err := noise.Measure(ctx, cpus, seconds)
		return results.NoiseFloor(f), err
	},
	HostFloor: func(ctx context.Context, a *load.Attacker, serverCPU int) (results.HostFloor, error) {
		l, err := noise.MeasureLatency(ctx, a, serverCPU, 0, 0)
		return results.HostFloor(l), err
	},
	Neighbour: neighbour.StartOn,
	Contract:  verify.RunEach,
	Faults:    faults.RunPlan,
}

// A runner without the steps a plan needs refuses it before it starts
// anything, naming each missing step; the steps a plan does not need
// may be missing.
func TestRunnerNeedsItsSteps(t *testing.T) {
	p := &plan.Plan{Name: "x", Faults: &plan.Faults{}}
	p.Rounds.Neighbour = true
	rn := &Runner{Root: t.TempDir(), ResultsDir: t.TempDir()}
	_, _, err := rn.Run(context.Background(), p)
	if err == nil {
		t.Fatal("Run with no steps: no error")
	}
	for _, want := range []string{"Noise", "Neighbour", "Contract", "Faults"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name the missing step %s", err, want)
		}
	}
	if err := (Steps{Contract: testSteps.Contract}).check(&plan.Plan{}, false); err != nil {
		t.Errorf("a plan with no faults, no neighbour and no noise needs only the contract step; got %v", err)
	}
}
