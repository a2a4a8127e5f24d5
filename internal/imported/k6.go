package imported

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// k6Point is one line of k6's JSON output.
type k6Point struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Time  time.Time         `json:"time"`
		Value float64           `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

// ReadK6 reads the output of k6 run --out json=FILE: every
// http_req_duration point is a request (failed when k6's
// expected_response tag says so, or without it a status outside 200-399),
// and the vus metric gives the level.
func ReadK6(path string) (*Result, error) {
	f, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ss []sample
	vus := 0
	var rx, tx int64
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 || !strings.Contains(string(b), `"Point"`) {
			continue
		}
		var p k6Point
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		switch p.Metric {
		case "http_req_duration":
			t := p.Data.Tags
			el := time.Duration(p.Data.Value * 1e6)
			s := sample{at: p.Data.Time.Add(-el), elapsed: el, label: t["name"], active: vus}
			if s.label == "" {
				s.label = t["url"]
			}
			if e, ok := t["expected_response"]; ok {
				s.ok = e == "true"
			} else {
				code, _ := strconv.Atoi(t["status"])
				s.ok = code >= 200 && code < 400
			}
			if !s.ok {
				s.reason = "status " + t["status"]
				if t["error"] != "" {
					s.reason += ": " + t["error"]
				}
			}
			ss = append(ss, s)
		case "vus":
			vus = int(p.Data.Value)
		case "data_received":
			rx += int64(p.Data.Value)
		case "data_sent":
			tx += int64(p.Data.Value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// k6 counts bytes per iteration, not per request: spread them evenly.
	if n := int64(len(ss)); n > 0 {
		for i := range ss {
			ss[i].received, ss[i].sent = rx/n, tx/n
		}
		ss[0].received += rx % n
		ss[0].sent += tx % n
	}
	return fromSamples(path, K6, ss)
}
