package monitor

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
)

// Connections counts the established TCP connections that pid's tree
// (the processes a Sample covers) holds to any of ports on loopback: the
// database connections a service holds, read without asking the
// database. Every arm alive shares the same servers, so the server's own
// count of sessions cannot say whose they are; the socket inodes in each
// process's descriptors can. It returns 0 when nothing can be read.
func Connections(pid int, ports []int) int {
	if len(ports) == 0 {
		return 0
	}
	want := map[uint16]bool{}
	for _, p := range ports {
		if p > 0 && p < 1<<16 {
			want[uint16(p)] = true
		}
	}
	owned := map[uint64]bool{}
	// Each network namespace has its own tables; a tree normally shares
	// one, so each is read once.
	tables := map[string]int32{}
	for _, p := range Tree(pid) {
		dir := "/proc/" + strconv.Itoa(int(p))
		if !socketInodes(dir+"/fd", owned) {
			continue
		}
		ns, err := os.Readlink(dir + "/ns/net")
		if err != nil {
			ns = dir // unreadable: read this process's own tables
		}
		if _, seen := tables[ns]; !seen {
			tables[ns] = p
		}
	}
	n := 0
	counted := map[uint64]bool{}
	for _, p := range tables {
		for _, f := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(int(p)) + "/net/" + f)
			if err != nil {
				continue
			}
			n += established(b, want, owned, counted)
		}
	}
	return n
}

// socketInodes adds the inodes of the sockets among the descriptors in
// dir ("socket:[12345]" links) to owned; false when dir cannot be read.
func socketInodes(dir string, owned map[uint64]bool) bool {
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return false
	}
	for _, name := range names {
		l, err := os.Readlink(dir + "/" + name)
		if err != nil {
			continue
		}
		if s, ok := strings.CutPrefix(l, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				owned[ino] = true
			}
		}
	}
	return true
}

// established counts the rows of a /proc/net/tcp or tcp6 table in the
// ESTABLISHED state (01) whose remote end is a loopback address on one of
// the ports and whose inode is owned, each inode once (counted). A row is
// "sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...", the
// addresses as hex words in the kernel's byte order, the port in hex.
func established(table []byte, ports map[uint16]bool, owned, counted map[uint64]bool) int {
	n := 0
	for i, line := range bytes.Split(table, []byte{'\n'}) {
		f := bytes.Fields(line)
		if i == 0 || len(f) < 10 || string(f[3]) != "01" {
			continue
		}
		host, port, ok := bytes.Cut(f[2], []byte{':'})
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(string(port), 16, 16)
		if err != nil || !ports[uint16(p)] || !loopback(host) {
			continue
		}
		ino, err := strconv.ParseUint(string(f[9]), 10, 64)
		if err != nil || !owned[ino] || counted[ino] {
			continue
		}
		counted[ino] = true
		n++
	}
	return n
}

// loopback reports whether a /proc/net/tcp address (8 hex digits, or 32
// in tcp6) is 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104. The kernel
// prints each 32-bit word of the address as the number its bytes make in
// the machine's own order (127.0.0.1 reads "0100007F" on amd64), so each
// word is put back into memory in that order to read the address.
func loopback(host []byte) bool {
	if len(host)%8 != 0 {
		return false
	}
	b := make([]byte, 0, len(host)/2)
	for w := 0; w < len(host); w += 8 {
		v, err := strconv.ParseUint(string(host[w:w+8]), 16, 32)
		if err != nil {
			return false
		}
		b = binary.NativeEndian.AppendUint32(b, uint32(v))
	}
	zero := func(xs []byte) bool {
		for _, x := range xs {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch len(b) {
	case 4:
		return b[0] == 127
	case 16:
		return zero(b[:15]) && b[15] == 1 ||
			zero(b[:10]) && b[10] == 0xff && b[11] == 0xff && b[12] == 127
	}
	return false
}
