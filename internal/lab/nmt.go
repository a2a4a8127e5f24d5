package lab

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/results"
)

// NMTOption is the JVM option that turns native memory tracking on, added
// to JAVA_OPTS of Java services when the plan sets jvm_native_memory.
const NMTOption = "-XX:NativeMemoryTracking=summary"

// withNMT returns env with NMTOption appended to JAVA_OPTS.
func withNMT(env map[string]string) {
	env["JAVA_OPTS"] = strings.TrimSpace(env["JAVA_OPTS"] + " " + NMTOption)
}

// nativeMemory takes the native memory summary of the JVM in the service
// tree rooted at pid, with the jcmd of the JDK that runs it.
func nativeMemory(ctx context.Context, pid int) *results.NativeMemory {
	jvm := 0
	for _, p := range monitor.Tree(pid) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); err == nil && strings.TrimSpace(string(b)) == "java" {
			jvm = int(p)
			break
		}
	}
	if jvm == 0 {
		return &results.NativeMemory{Error: "no java process in the service's tree"}
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", jvm))
	if err != nil {
		return &results.NativeMemory{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(filepath.Dir(exe), "jcmd"), strconv.Itoa(jvm), "VM.native_memory", "summary").CombinedOutput()
	if err != nil {
		return &results.NativeMemory{Error: fmt.Sprintf("jcmd: %v: %s", err, tailLines(string(out), 3))}
	}
	return parseNMT(string(out))
}

var (
	nmtTotal    = regexp.MustCompile(`^Total: reserved=(\d+)KB, committed=(\d+)KB`)
	nmtCategory = regexp.MustCompile(`^-\s+(.+?) \(reserved=(\d+)KB, committed=(\d+)KB`)
)

// parseNMT reads the output of `jcmd PID VM.native_memory summary`.
func parseNMT(text string) *results.NativeMemory {
	nm := &results.NativeMemory{}
	kb := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v << 10 }
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := nmtTotal.FindStringSubmatch(line); m != nil {
			nm.ReservedBytes, nm.CommittedBytes = kb(m[1]), kb(m[2])
		} else if m := nmtCategory.FindStringSubmatch(line); m != nil {
			nm.Categories = append(nm.Categories, results.MemoryCategory{Name: m[1], ReservedBytes: kb(m[2]), CommittedBytes: kb(m[3])})
		}
	}
	if nm.CommittedBytes == 0 {
		nm.Error = "no summary in jcmd's output: " + tailLines(text, 3)
	}
	return nm
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
