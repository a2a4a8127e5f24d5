package lab

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// build builds every service the plan uses, once; cached builds are free.
// Builds of one language take turns, as they share a toolchain's local
// store (two Maven processes downloading into one ~/.m2 at once can
// corrupt it); languages build side by side, one per CPU, so that a long
// single-threaded step (rust-axum's link-time optimisation, a JVM's
// training run) leaves the other CPUs to the next build.
func (x *execution) build(ctx context.Context) {
	if err := os.MkdirAll(filepath.Join(x.dir, "builds"), 0o755); err != nil {
		return
	}
	var langs [][]string // service names by language, in plan order
	lane := map[string]int{}
	for _, im := range x.plan.Implementations {
		name := im.Service
		if _, done := x.rec.Builds[name]; done {
			continue
		}
		b := &results.Build{}
		x.rec.Builds[name] = b
		m := x.manifests[name]
		if m == nil {
			b.Error = "no manifest services/" + name + "/showdown.yaml"
			continue
		}
		i, ok := lane[m.Language]
		if !ok {
			i = len(langs)
			lane[m.Language] = i
			langs = append(langs, nil)
		}
		langs[i] = append(langs[i], name)
	}
	work := make(chan []string)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(langs)) {
		wg.Go(func() {
			for names := range work {
				for _, name := range names {
					x.buildOne(ctx, x.manifests[name], x.rec.Builds[name])
				}
			}
		})
	}
	for _, names := range langs {
		work <- names
	}
	close(work)
	wg.Wait()
}

// buildOne builds m into b, its log in builds/<name>.log.
func (x *execution) buildOne(ctx context.Context, m *service.Manifest, b *results.Build) {
	name := m.Name
	logPath := filepath.Join(x.dir, "builds", name+".log")
	x.Say("building %s", name)
	res, err := stack.Build(ctx, m, logPath, func(s string) { x.Warn("%s", s) })
	b.Cached, b.Seconds, b.ArtifactBytes = res.Cached, res.Duration.Seconds(), res.ArtifactBytes
	if err != nil {
		b.Error = err.Error()
		b.LogTail = tailFile(logPath, 30)
		x.Warn("%s failed to build: %v", name, err)
		return
	}
	if res.Cached {
		x.Say("built %s (cached)", name)
	} else {
		x.Say("built %s in %.1fs", name, res.Duration.Seconds())
	}
}
