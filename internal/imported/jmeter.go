package imported

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// sample is one request of an imported tool's results.
type sample struct {
	at       time.Time // when the request started
	elapsed  time.Duration
	label    string
	ok       bool
	reason   string
	received int64
	sent     int64
	active   int // threads or VUs active at the time
}

// ReadJMeter reads a JMeter results file in CSV form (.jtl, with the
// default header line: timeStamp,elapsed,label,responseCode,...,success,...).
func ReadJMeter(path string) (*Result, error) {
	f, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReader(f))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"timeStamp", "elapsed", "label", "success"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column; save results as CSV with a header line (jmeter.save.saveservice.print_field_names=true)", path, need)
		}
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	var ss []sample
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ts, err1 := strconv.ParseInt(get(rec, "timeStamp"), 10, 64)
		el, err2 := strconv.ParseInt(get(rec, "elapsed"), 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s:%d: timeStamp (epoch ms) and elapsed (ms) must be integers: %w", path, line, err)
		}
		s := sample{at: time.UnixMilli(ts), elapsed: time.Duration(el) * time.Millisecond, label: get(rec, "label"),
			ok: get(rec, "success") == "true"}
		if !s.ok {
			s.reason = strings.TrimSpace(get(rec, "responseCode") + " " + get(rec, "failureMessage"))
			if s.reason == "" {
				s.reason = get(rec, "responseMessage")
			}
		}
		s.received, _ = strconv.ParseInt(get(rec, "bytes"), 10, 64)
		s.sent, _ = strconv.ParseInt(get(rec, "sentBytes"), 10, 64)
		s.active, _ = strconv.Atoi(get(rec, "allThreads"))
		ss = append(ss, s)
	}
	return fromSamples(path, JMeter, ss)
}
