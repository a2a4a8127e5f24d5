package lab

import (
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// armEnv is the environment an arm starts with: the plan's, the
// manifest's cores knob at the arm's cores, then the implementation's
// own (a variant that pins WORKERS on purpose keeps it).
func armEnv(p *plan.Plan, im plan.Implementation, m *service.Manifest) map[string]string {
	env := map[string]string{}
	for _, src := range []map[string]string{p.Env, m.Cores.EnvAt(im.Cores), im.Env} {
		for k, v := range src {
			env[k] = v
		}
	}
	return env
}
