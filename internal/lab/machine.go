package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/machine"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
)

// thisMachine is the machine a plan runs on here, for plan.ParsePlan: the
// CPUs the process could run on at its start.
func thisMachine() plan.Machine { return plan.Machine{CPUs: machine.CPUs()} }

// DescribeMachine reads the machine's facts and tool versions; root is the
// project folder (for its git commit).
func DescribeMachine(root string) results.Machine {
	m := results.Machine{CPUs: runtime.NumCPU(), Versions: map[string]string{}}
	m.Hostname, _ = os.Hostname()
	if info, err := machine.ReadCPUInfo(); err == nil {
		m.CPUModel = info.Model
	}
	m.MemoryBytes, _ = machine.MemTotal()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		m.Cgroup = "v2"
	} else {
		m.Cgroup = "v1"
	}
	m.Versions["showdown-go"] = runtime.Version()
	tools := map[string][]string{
		"go":   {"go", "version"},
		"node": {"node", "--version"},
		"mvn":  {"mvn", "-B", "--version"},
	}
	if home, _ := service.FindJDK(21); home != "" {
		tools["java"] = []string{filepath.Join(home, "bin", "java"), "-version"}
	}
	if pgs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(pgs) > 0 {
		sort.Strings(pgs)
		tools["postgres"] = []string{pgs[len(pgs)-1], "--version"}
	}
	for _, c := range []string{"mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld"} {
		if path, err := exec.LookPath(c); err == nil {
			tools["mariadb"] = []string{path, "--version"}
			break
		}
	}
	for name, argv := range tools {
		m.Versions[name] = ansi.ReplaceAllString(firstLine(argv), "")
	}
	m.GitCommit = strings.TrimSpace(output(root, "git", "rev-parse", "HEAD"))
	m.GitDirty = strings.TrimSpace(output(root, "git", "status", "--porcelain", "--untracked-files=no")) != ""
	return m
}

// ansi matches terminal colour codes some tools print even to a pipe.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func firstLine(argv []string) string {
	out := output("", argv...)
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return line
}

func output(dir string, argv ...string) string {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	done := make(chan struct{})
	var out []byte
	go func() {
		out, _ = cmd.CombinedOutput()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		<-done
	}
	return string(out)
}
