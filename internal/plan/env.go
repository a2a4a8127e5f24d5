package plan

import (
	"strconv"

	"github.com/showdownlab/showdown/workloads"
)

// DefaultEnv is the environment every arm gets unless its plan sets the
// same variables: the contract's pool size and no request log.
func DefaultEnv() map[string]string {
	return map[string]string{"DB_POOL_SIZE": strconv.Itoa(workloads.DefaultPoolSize), "LOG_REQUESTS": "false"}
}

// ArmEnv is the environment arm im starts with, the same under every
// command that starts it (run, up --plan, the fault test, k8s render):
// the plan's env (DefaultEnv where it is silent), then knob (the stack's
// cores knob at the arm's cores, service.Cores.EnvAt(im.Cores); nil for a
// stack that follows its CPUs or an arm without cores), then the
// implementation's own env (a variant that pins WORKERS on purpose keeps
// it), then extra (a command line's --env), each over the ones before.
func (p *Plan) ArmEnv(im Implementation, knob, extra map[string]string) map[string]string {
	env := DefaultEnv()
	for _, src := range []map[string]string{p.Env, knob, im.Env, extra} {
		for k, v := range src {
			env[k] = v
		}
	}
	return env
}
