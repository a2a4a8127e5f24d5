package warmup

import "time"

// WatchCompiler makes the rule RuleCompilerTrend: read gives the CPU time
// the service's compiler threads have used so far (monitor.CompilerCPU),
// and is called once a second.
func (w *Watch) WatchCompiler(read func() time.Duration) {
	w.WatchRuntime(func() (time.Duration, string) { return read(), "hotspot" })
}
