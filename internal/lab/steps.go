package lab

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/load"
)

// Steps are the parts of a run that packages of their own own: the lab
// calls each at its moment and knows nothing else of it. The command
// passes the real ones (cmd/showdown/run.go): noise.Measure's floor,
// noise.MeasureLatency's host floor, neighbour.StartOn, verify.RunEach and faults.RunPlan.
type Steps struct {
	// Noise measures the machine's own per-second variation on cpus for
	// seconds (0: its default), before any service starts.
	Noise func(ctx context.Context, cpus []int, seconds int) (results.NoiseFloor, error)
	// HostFloor measures this host's own latency floor with the
	// generator a against a trivial server on serverCPU (negative: not
	// pinned), before a capacity search.
	HostFloor func(ctx context.Context, a *load.Attacker, serverCPU int) (results.HostFloor, error)
	// Neighbour starts a noisy neighbour on cpus, its turns between
	// turns[0] and turns[1] apart (none: its defaults), and returns how to
	// stop it and its turns' span in words.
	Neighbour func(cpus []int, turns []time.Duration) (stop func(), span string, err error)
	// Contract runs the contract suite's non-destructive checks of
	// workload w on the service at baseURL once, telling report each
	// check's name, whether it passed or was skipped, and its detail.
	Contract func(ctx context.Context, baseURL, w string, knownSKUs []int64, openTransactions func(ctx context.Context, workload string) (int, error), report func(check string, passed, skipped bool, detail string))
	// Faults runs the bank under faults after the measurement, for a plan
	// with faults, recording each test in rec and writing it to dir.
	Faults func(ctx context.Context, p *plan.Plan, dir string, rec *results.Run, manifests map[string]*service.Manifest, say, warn func(string))
}

// check says which step the run of p would need and lacks: a Runner
// without them would measure less than the plan asks, silently.
func (s Steps) check(p *plan.Plan, noise bool) error {
	var missing []string
	if s.Noise == nil && noise {
		missing = append(missing, "Noise")
	}
	if s.HostFloor == nil && (p.SLO != nil || p.AtRate != nil) {
		missing = append(missing, "HostFloor")
	}
	if s.Neighbour == nil && p.Rounds.Neighbour {
		missing = append(missing, "Neighbour")
	}
	if s.Contract == nil {
		missing = append(missing, "Contract")
	}
	if s.Faults == nil && p.Faults != nil {
		missing = append(missing, "Faults")
	}
	if len(missing) > 0 {
		return errors.New("lab: the runner lacks the steps " + strings.Join(missing, ", ") + " (cmd/showdown passes the real ones)")
	}
	return nil
}
