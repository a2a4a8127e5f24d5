package verify

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// step is one request of a keep-alive sequence and the status it needs.
type step struct {
	req    request
	status int
}

// keepAliveCheck sends steps one after the other on one connection, as a
// load generator does: an error answer must not leave bytes of its request
// behind to corrupt the next one. A server may close the connection after
// an answer (with Connection: close); then the rest is not tried.
func keepAliveCheck(w, name string, needs func() error, steps func() []step) check {
	if w != "" {
		name = w + "/" + name
	}
	return check{workload: w, name: name, run: func(ctx context.Context, s *session) error {
		if needs != nil {
			if err := needs(); err != nil {
				return skipError(err.Error())
			}
		}
		conn, err := (&net.Dialer{Timeout: 3 * time.Second}).DialContext(ctx, "tcp", s.addr)
		if err != nil {
			return fmt.Errorf("dial: %v", err)
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		var sent strings.Builder
		for i, st := range steps() {
			wire := keepAlive(st.req.bytes(s.addr))
			sent.Write(wire)
			sent.WriteString("\n")
			conn.SetDeadline(time.Now().Add(requestTimeout))
			if _, err := conn.Write(wire); err != nil {
				s.last = exchange{request: dump([]byte(sent.String())), response: "(write failed)"}
				return fmt.Errorf("request %d on the kept-alive connection: write: %v", i+1, err)
			}
			res := readOne(br, st.req.method)
			s.last = exchange{request: dump([]byte(sent.String())), response: res.text}
			if res.err != nil {
				return fmt.Errorf("request %d on the kept-alive connection (%s %s): %v", i+1, st.req.method, st.req.path, res.err)
			}
			if res.status != st.status {
				hint := ""
				if i > 0 {
					hint = " (were bytes of the previous request read as part of this one?)"
				}
				return fmt.Errorf("request %d on the kept-alive connection (%s %s): got %d, want %d%s", i+1, st.req.method, st.req.path, res.status, st.status, hint)
			}
			if res.closing {
				return nil // the server closed the connection: allowed
			}
		}
		return nil
	}}
}
