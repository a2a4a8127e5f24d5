package scenario

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/showdownlab/showdown/load"
)

// RunSetup sends the setup section's requests once, in order, with client
// (http.DefaultClient when nil), checking each like a step. What they
// capture is given to every user made afterwards by NewUser, so it must
// return before the first NewUser. It does nothing when there is no setup
// section.
func (s *Scenario) RunSetup(ctx context.Context, client *http.Client) error {
	if len(s.setup) == 0 {
		return nil
	}
	if client == nil {
		client = http.DefaultClient
	}
	u := s.newUser(0, s.setup)
	var req load.Request
	for i, st := range s.setup {
		req.Reset()
		if err := u.request(0, i, st, &req); err != nil {
			return fmt.Errorf("setup step %q: %w", st.name, err)
		}
		resp, err := send(ctx, client, &req)
		if err != nil {
			return fmt.Errorf("setup step %q: %w", st.name, err)
		}
		if err := u.check(st, resp); err != nil {
			return fmt.Errorf("setup step %q: %w", st.name, err)
		}
	}
	s.setupVals = map[int]value{}
	for _, sym := range s.setupSlots() {
		s.setupVals[sym] = u.slots[sym]
	}
	return nil
}

// setupSlots lists the slots the setup section captures.
func (s *Scenario) setupSlots() []int {
	var out []int
	for _, st := range s.setup {
		for _, c := range st.captures {
			out = append(out, c.slot)
		}
	}
	return out
}

// send performs req with net/http and reads the whole response.
func send(ctx context.Context, client *http.Client, req *load.Request) (*load.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	for _, h := range req.Header {
		hr.Header.Add(h.Name, h.Value)
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	var raw bytes.Buffer
	for name, vals := range resp.Header {
		for _, v := range vals {
			fmt.Fprintf(&raw, "%s: %s\r\n", name, v)
		}
	}
	return &load.Response{Status: resp.StatusCode, RawHeader: raw.Bytes(), Body: body}, nil
}
