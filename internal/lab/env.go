package lab

import (
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// ArmEnv is the environment arm im of plan p starts with under run:
// plan.ArmEnv with the stack's cores knob at the arm's cores (the same
// call as up --plan's and the fault test's).
func ArmEnv(p *plan.Plan, im plan.Implementation, m *service.Manifest) map[string]string {
	return p.ArmEnv(im, m.Cores.EnvAt(im.Cores), nil)
}
