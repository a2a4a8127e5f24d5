package monitor

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"
)

// CompilerThreads are the name prefixes of the threads in which a runtime
// compiles code while it serves: HotSpot's C1 and C2 compiler threads
// ("C1 CompilerThre", "C2 CompilerThre", the kernel keeps 15 characters of
// a name) and a JVMCI (Graal) compiler's. V8 compiles on worker threads it
// shares with the garbage collector (Node 20 names them "node", like every
// one of its threads), and Go, Rust and CPython 3.11 compile nothing at
// run time, so for them the share is 0.
var CompilerThreads = []string{"C1 CompilerThre", "C2 CompilerThre", "JVMCI CompilerT", "JVMCI-native Co"}

// The runtimes Compiler recognises by their threads' names.
const (
	// HotSpot is a JVM: a thread named in CompilerThreads exists (HotSpot
	// keeps a C1 and a C2 thread even while it compiles nothing).
	HotSpot = "hotspot"
	// V8 is Node.js: a thread is named "node". Its optimizing compiler
	// runs on V8's platform worker threads, which Node 20 leaves named
	// "node" too and which also run the concurrent garbage collector, so
	// their CPU is not the compiler's and Compiler counts none of it.
	V8 = "v8"
)

// clockTicks is the unit of /proc's CPU times: USER_HZ, 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// CompilerCPU is the CPU time the threads named in CompilerThreads have
// used so far, over root's whole process tree. Threads that ended since
// the last call take their time with them, so compare readings a second
// apart, not the first and the last.
func CompilerCPU(root int32) time.Duration {
	cpu, _ := Compiler(root)
	return cpu
}

// Compiler is CompilerCPU and the runtime root's process tree shows by
// its threads' names: HotSpot, V8, or "" where it shows no runtime with a
// JIT compiler (Go, Rust, CPython).
func Compiler(root int32) (time.Duration, string) {
	var ticks uint64
	runtime := ""
	buf := make([]byte, 1024)
	for _, pid := range Tree(int(root)) {
		t, r := compilerTicks(pid, buf)
		ticks += t
		runtime = either(runtime, r)
	}
	return time.Duration(ticks) * time.Second / clockTicks, runtime
}

// either keeps the runtime already found; HotSpot wins over V8 (a JVM
// that starts a node process is watched by its compiler).
func either(found, r string) string {
	if found == HotSpot || r == "" {
		return found
	}
	return r
}

// compilerTicks sums utime and stime of pid's compiler threads, and names
// the runtime its threads show.
func compilerTicks(pid int32, buf []byte) (uint64, string) {
	dir := "/proc/" + strconv.Itoa(int(pid)) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return 0, ""
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, ""
	}
	var total uint64
	runtime := ""
	for _, tid := range tids {
		f, err := os.Open(dir + "/" + tid + "/stat")
		if err != nil {
			continue
		}
		n, _ := f.Read(buf)
		f.Close()
		total += threadTicks(buf[:n])
		runtime = either(runtime, runtimeOf(buf[:n]))
	}
	return total, runtime
}

// runtimeOf names the runtime a /proc/.../stat line's thread shows by its
// name: HotSpot for a compiler thread, V8 for "node", else "".
func runtimeOf(stat []byte) string {
	name, ok := threadName(stat)
	switch {
	case !ok:
		return ""
	case isCompiler(name):
		return HotSpot
	case name == "node":
		return V8
	}
	return ""
}

// threadName is the name (field 2, in parentheses) of a /proc/.../stat
// line. The name may hold spaces and parentheses, so it ends at the last
// ')'.
func threadName(stat []byte) (string, bool) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", false
	}
	return string(stat[open+1 : end]), true
}

// isCompiler reports whether a thread's name is a compiler thread's.
func isCompiler(name string) bool {
	for _, p := range CompilerThreads {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// threadTicks is utime+stime (fields 14 and 15) of one /proc/.../stat
// line if its name is a compiler thread's, else 0. The fields after the
// name are counted from its last ')'.
func threadTicks(stat []byte) uint64 {
	if name, ok := threadName(stat); !ok || !isCompiler(name) {
		return 0
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15).
	f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	return parseUint(f[11]) + parseUint(f[12])
}
