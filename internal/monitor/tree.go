package monitor

import (
	"bytes"
	"io"
	"os"
	"strconv"
)

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
