package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// Runner executes plans and writes results folders.
type Runner struct {
	// Root is the project folder (services/, workloads/).
	Root string
	// ResultsDir is where results folders are created (default
	// Root/results).
	ResultsDir string
	// Progress receives progress lines (nil: discarded).
	Progress io.Writer
	// TTY redraws one live status line instead of printing lines.
	TTY bool
	// Command is the command line that started the run, for run.json.
	Command string
	// NoiseSeconds is how long the machine's own noise is measured before
	// the first service starts (0: the Noise step's default; negative: not
	// measured, and the warm-up rule keeps its own thresholds).
	NoiseSeconds int
	// Steps are the parts of the run other packages own (Steps).
	Steps Steps
}

// execution is the state of one plan being executed.
type execution struct {
	rn        *Runner
	plan      *plan.Plan
	dir       string
	rec       *results.Run
	manifests map[string]*service.Manifest
	dbs       *stack.Databases
	known     []int64
	progress  *progress
	starts    int // service starts so far
	// skuIndex is whether the sku table has its index now (the
	// database dimension switches it).
	skuIndex bool
	// mu keeps lines and warnings whole while builds and the databases'
	// start run side by side.
	mu sync.Mutex
}

// Say prints a progress line.
func (x *execution) Say(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.progress != nil {
		x.progress.line(fmt.Sprintf(format, args...))
		return
	}
	if x.rn.Progress != nil {
		fmt.Fprintf(x.rn.Progress, format+"\n", args...)
	}
}

// Warn prints a progress line and records it in run.json.
func (x *execution) Warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	x.mu.Lock()
	x.rec.Warnings = append(x.rec.Warnings, msg)
	x.mu.Unlock()
	x.Say("warning: %s", msg)
}

// sayWriter turns writes of whole lines into progress lines.
type sayWriter struct{ x *execution }

func (w sayWriter) Write(b []byte) (int, error) {
	w.x.Say("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// newResultsDir creates results/<UTC time>-<plan>/, never reusing one.
func newResultsDir(parent, name string, now time.Time) (string, error) {
	base := filepath.Join(parent, now.UTC().Format("20060102T150405Z")+"-"+results.FileName(name))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	for i := 0; i < 100; i++ {
		dir := base
		if i > 0 {
			dir = fmt.Sprintf("%s-%d", base, i+1)
		}
		if err := os.Mkdir(dir, 0o755); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("cannot create a new results folder next to %s", base)
}

// tailFile is the last lines of the file at path ("" if unreadable).
func tailFile(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
