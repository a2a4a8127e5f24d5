package monitor

import (
	"bytes"
	"io"
	"os"
	"strconv"
)

// Descendants returns the pids of every live descendant of root, found in
// one pass over /proc. gopsutil's Children rescans all of /proc for each
// parent, which costs a whole scan per process in the tree, every second;
// one scan reading only the parent pid is an order of magnitude cheaper.
func Descendants(root int32) []int32 {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	kids := map[int32][]int32{}
	buf := make([]byte, 512)
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.ParseInt(name, 10, 32)
		if err != nil {
			continue
		}
		ppid, ok := readPPID("/proc/"+name+"/stat", buf)
		if !ok {
			continue
		}
		kids[ppid] = append(kids[ppid], int32(pid))
	}
	var out []int32
	queue := []int32{root}
	for len(queue) > 0 && len(out) < 4096 {
		p := queue[0]
		queue = queue[1:]
		for _, k := range kids[p] {
			out = append(out, k)
			queue = append(queue, k)
		}
	}
	return out
}

// readPPID reads the parent pid, the fourth field of /proc/PID/stat. The
// second field (the command in parentheses) may itself hold spaces and
// parentheses, so parsing starts after its last ')'.
func readPPID(path string, buf []byte) (int32, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	n, _ := f.Read(buf)
	f.Close()
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	// ") S 1234 ..."
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.ParseInt(string(fields[1]), 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(ppid), true
}

// ctxSwitches sums voluntary and involuntary context switches over every
// thread of pid. /proc/PID/status (what gopsutil reads) counts only the
// main thread, which in a Go, JVM or Node server is mostly asleep.
func ctxSwitches(pid int32, buf []byte) (uint64, bool) {
	dir := "/proc/" + strconv.Itoa(int(pid)) + "/task"
	d, err := os.Open(dir)
	if err != nil {
		return 0, false
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, false
	}
	var total uint64
	for _, tid := range tids {
		f, err := os.Open(dir + "/" + tid + "/status")
		if err != nil {
			continue
		}
		n, _ := io.ReadFull(f, buf)
		f.Close()
		for _, line := range bytes.Split(buf[:n], []byte{'\n'}) {
			if v, ok := bytes.CutPrefix(line, []byte("voluntary_ctxt_switches:")); ok {
				total += parseUint(v)
			} else if v, ok := bytes.CutPrefix(line, []byte("nonvoluntary_ctxt_switches:")); ok {
				total += parseUint(v)
			}
		}
	}
	return total, true
}

func parseUint(b []byte) uint64 {
	v, _ := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	return v
}
