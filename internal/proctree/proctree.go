// Package proctree walks a process tree through /proc: the processes a
// service or a database server started. The monitor samples them, cgroup
// pins them and the CLI checks none is left behind; it imports nothing of
// the project.
package proctree

import (
	"bytes"
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
