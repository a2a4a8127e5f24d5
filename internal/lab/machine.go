package lab

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Machine describes where a run happened.
type Machine struct {
	Hostname    string            `json:"hostname"`
	CPUModel    string            `json:"cpu_model"`
	CPUs        int               `json:"cpus"`
	MemoryBytes int64             `json:"memory_bytes"`
	Kernel      string            `json:"kernel"`
	OS          string            `json:"os"`
	Cgroup      string            `json:"cgroup"`
	Versions    map[string]string `json:"versions"`
	GitCommit   string            `json:"git_commit,omitempty"`
	GitDirty    bool              `json:"git_dirty,omitempty"`
}

// DescribeMachine reads the machine's facts and tool versions; root is the
// project folder (for its git commit).
func DescribeMachine(root string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), Versions: map[string]string{}}
	m.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kb int64
			if n, _ := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); n == 1 {
				m.MemoryBytes = kb * 1024
			}
		}
		f.Close()
	}
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
	for name, argv := range map[string][]string{
		"go":       {"go", "version"},
		"node":     {"node", "--version"},
		"java":     {"java", "-version"},
		"mvn":      {"mvn", "--version"},
		"postgres": {"sh", "-c", "ls -d /usr/lib/postgresql/*/bin/postgres | sort -V | tail -1 | xargs -I{} {} --version"},
		"mariadb":  {"sh", "-c", "(command -v mariadbd || echo /usr/sbin/mariadbd) | xargs -I{} {} --version"},
	} {
		m.Versions[name] = firstLine(argv)
	}
	m.GitCommit = strings.TrimSpace(output(root, "git", "rev-parse", "HEAD"))
	m.GitDirty = strings.TrimSpace(output(root, "git", "status", "--porcelain", "--untracked-files=no")) != ""
	return m
}

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
