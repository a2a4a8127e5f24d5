package monitor

import (
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"testing"
)

// TestConnections dials a real listener a few times over IPv4 and IPv6
// loopback and counts the test's own connections to its port: each
// dialled connection once, the accepted ends (whose remote is the
// dialler's ephemeral port) not at all, and none to another port.
func TestConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	dial := func(network, addr string) {
		t.Helper()
		c, err := net.Dial(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c, <-accepted)
	}
	pid := os.Getpid()
	if got := Connections(pid, []int{port}); got != 0 {
		t.Errorf("before dialling: %d connections, want 0", got)
	}
	for range 3 {
		dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	}
	if got := Connections(pid, []int{port}); got != 3 {
		t.Errorf("3 dialled: %d connections, want 3", got)
	}
	if got := Connections(pid, []int{port + 1}); got != 0 {
		t.Errorf("another port: %d connections, want 0", got)
	}
	if got := Connections(pid, nil); got != 0 {
		t.Errorf("no ports: %d connections, want 0", got)
	}
	// A dual-stack listener on ::1 shows its connections in tcp6.
	if ln6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		defer ln6.Close()
		go func() {
			for {
				c, err := ln6.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
		port6 := ln6.Addr().(*net.TCPAddr).Port
		dial("tcp6", "[::1]:"+strconv.Itoa(port6))
		if got := Connections(pid, []int{port, port6}); got != 4 {
			t.Errorf("3 over IPv4 and 1 over IPv6: %d connections, want 4", got)
		}
		conns[len(conns)-2].Close()
	} else {
		t.Logf("no IPv6 loopback here (%v): tcp6 not checked", err)
	}
	conns[0].Close()
	conns[1].Close()
	conns = conns[2:]
	if got := Connections(pid, []int{port}); got != 2 {
		t.Errorf("one closed: %d connections, want 2", got)
	}
}

// TestLoopback reads the addresses as /proc/net/tcp and tcp6 print them
// on a little-endian machine.
func TestLoopback(t *testing.T) {
	if !littleEndian() {
		t.Skip("the rows are written as a little-endian kernel prints them")
	}
	for _, c := range []struct {
		host string
		want bool
	}{
		{"0100007F", true},                          // 127.0.0.1
		{"0200007F", true},                          // 127.0.0.2
		{"0101A8C0", false},                         // 192.168.1.1
		{"00000000000000000000000001000000", true},  // ::1
		{"0000000000000000FFFF00000100007F", true},  // ::ffff:127.0.0.1
		{"0000000000000000FFFF00000101A8C0", false}, // ::ffff:192.168.1.1
		{"00000000000000000000000000000000", false}, // ::
		{"zz00007F", false},                         // not hex
	} {
		if got := loopback([]byte(c.host)); got != c.want {
			t.Errorf("loopback(%s) = %v, want %v", c.host, got, c.want)
		}
	}
}

// TestEstablished counts only established rows to a wanted port on
// loopback whose socket the tree owns, each once.
func TestEstablished(t *testing.T) {
	if !littleEndian() {
		t.Skip("the rows are written as a little-endian kernel prints them")
	}
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:D431 0100007F:1538 01 00000000:00000000 00:00000000 00000000  1000        0 101 1 0 20 4 30 10 -1
   1: 0100007F:D432 0100007F:1538 01 00000000:00000000 00:00000000 00000000  1000        0 102 1 0 20 4 30 10 -1
   2: 0100007F:D433 0100007F:1538 06 00000000:00000000 00:00000000 00000000  1000        0 103 1 0 20 4 30 10 -1
   3: 0100007F:D434 0100007F:1539 01 00000000:00000000 00:00000000 00000000  1000        0 104 1 0 20 4 30 10 -1
   4: 0100007F:D435 0101A8C0:1538 01 00000000:00000000 00:00000000 00000000  1000        0 105 1 0 20 4 30 10 -1
   5: 0100007F:D436 0100007F:1538 01 00000000:00000000 00:00000000 00000000  1000        0 106 1 0 20 4 30 10 -1
   6: 0100007F:1538 0100007F:D437 01 00000000:00000000 00:00000000 00000000  1000        0 107 1 0 20 4 30 10 -1
`
	owned := map[uint64]bool{101: true, 102: true, 103: true, 104: true, 105: true, 107: true}
	counted := map[uint64]bool{}
	// 101 and 102: counted; 103 closing; 104 another port; 105 not
	// loopback; 106 another process's; 107 the server's end.
	if got := established([]byte(table), map[uint16]bool{0x1538: true}, owned, counted); got != 2 {
		t.Errorf("established = %d, want 2", got)
	}
	if got := established([]byte(table), map[uint16]bool{0x1538: true}, owned, counted); got != 0 {
		t.Errorf("read again: %d, want 0 (each inode once)", got)
	}
}

// littleEndian reports whether this machine prints /proc/net/tcp's
// addresses byte-reversed, as the tables in these tests are written.
func littleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }
