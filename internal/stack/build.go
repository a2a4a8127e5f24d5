package stack

import (
	"context"

	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/load/atomicfile"
)

// Build builds m (service.Manifest.Build), its output written to logPath,
// which appears whole when the build has ended, failed or not (package
// atomicfile). A log that cannot be created fails the build; one that
// cannot be made whole at the end is told to warn.
func Build(ctx context.Context, m *service.Manifest, logPath string, warn func(string)) (service.BuildResult, error) {
	f, err := atomicfile.Create(logPath, 0o644)
	if err != nil {
		return service.BuildResult{}, err
	}
	res, err := m.Build(ctx, f)
	if cerr := f.Commit(); cerr != nil {
		warn(logPath + ": " + cerr.Error())
	}
	return res, err
}
