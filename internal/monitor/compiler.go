package monitor

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/proctree"
)

// CompilerThreads are the name prefixes of the threads in which a runtime
// compiles code while it serves: HotSpot's C1 and C2 compiler threads
// ("C1 CompilerThre", "C2 CompilerThre", the kernel keeps 15 characters of
// a name) and a JVMCI (Graal) compiler's. V8 compiles on worker threads it
// shares with the garbage collector, and Go, Rust and CPython 3.11 compile
// nothing at run time, so for them the share is 0.
var CompilerThreads = []string{"C1 CompilerThre", "C2 CompilerThre", "JVMCI CompilerT", "JVMCI-native Co"}

// clockTicks is the unit of /proc's CPU times: USER_HZ, 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// CompilerCPU is the CPU time the threads named in CompilerThreads have
// used so far, over root's whole process tree. Threads that ended since
// the last call take their time with them, so compare readings a second
// apart, not the first and the last.
func CompilerCPU(root int32) time.Duration {
	var ticks uint64
	buf := make([]byte, 1024)
	for _, pid := range append([]int32{root}, proctree.Descendants(root)...) {
		ticks += compilerTicks(pid, buf)
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// compilerTicks sums utime and stime of pid's compiler threads.
func compilerTicks(pid int32, buf []byte) uint64 {
	dir := "/proc/" + strconv.Itoa(int(pid)) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return 0
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0
	}
	var total uint64
	for _, tid := range tids {
		f, err := os.Open(dir + "/" + tid + "/stat")
		if err != nil {
			continue
		}
		n, _ := f.Read(buf)
		f.Close()
		total += threadTicks(buf[:n])
	}
	return total
}

// threadTicks is utime+stime (fields 14 and 15) of one /proc/.../stat
// line if its name (field 2, in parentheses) is a compiler thread's, else
// 0. The name may hold spaces, so the fields after it are counted from
// its last ')'.
func threadTicks(stat []byte) uint64 {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return 0
	}
	name := string(stat[open+1 : end])
	compiler := false
	for _, p := range CompilerThreads {
		if strings.HasPrefix(name, p) {
			compiler = true
			break
		}
	}
	if !compiler {
		return 0
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15).
	f := bytes.Fields(stat[end+1:])
	if len(f) < 13 {
		return 0
	}
	return parseUint(f[11]) + parseUint(f[12])
}
