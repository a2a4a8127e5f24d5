package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/showdownlab/showdown/load/atomicfile"
)

// WarmupFile holds a WarmupRun on its own: what a warm-up run apart from
// its levels (a Kubernetes warm-up pod) leaves for the runner to copy.
const WarmupFile = "warmup.json"

// WriteWarmup stores w as warmup.json in dir (created if needed),
// atomically.
func WriteWarmup(dir string, w *WarmupRun) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, WarmupFile), append(b, '\n'), 0o644)
}

// ReadWarmup reads warmup.json from dir.
func ReadWarmup(dir string) (*WarmupRun, error) {
	path := filepath.Join(dir, WarmupFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w WarmupRun
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &w, nil
}
