package load

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRecorderGathersTotal: a sample is recorded in its label only, and
// the total gathers the labels at each interval and at the end: its
// samples, histograms, bytes and statuses are the labels' sums, and its
// errors and reasons are counted as they come.
func TestRecorderGathersTotal(t *testing.T) {
	r := newRecorder([]string{"GET /a", "POST /b"}, 10, 0)
	t0 := time.Unix(1_800_000_000, 0)
	r.begin(t0)
	ms := time.Millisecond
	r.record(0, 2*ms, 1*ms, noLateness, 100, 200, 200, "")
	r.record(0, 4*ms, 3*ms, noLateness, 100, 200, 404, "status 404")
	r.record(1, 8*ms, 7*ms, noLateness, 300, 50, 200, "")
	if n, errs := r.totals(); n != 3 || errs != 1 {
		t.Fatalf("totals() before a flush = %d, %d; want 3, 1", n, errs)
	}
	iv := r.flush(t0.Add(time.Second), 1)
	if iv.Requests != 3 || iv.Errors != 1 {
		t.Errorf("first interval: %d requests, %d errors; want 3, 1", iv.Requests, iv.Errors)
	}
	if got := iv.Max; got < 7.99 || got > 8.01 {
		t.Errorf("first interval's max latency = %v ms, want 8 (the second label's sample)", got)
	}
	for _, tag := range []string{TotalTag, r.labels[0].row.Tag, r.labels[1].row.Tag} {
		if iv.Latency[tag] == "" || iv.Service[tag] == "" {
			t.Errorf("first interval has no histogram for %q", tag)
		}
	}
	// Only the second label in the second interval; a status outside
	// 100-599 is counted too.
	r.record(1, 16*ms, 15*ms, noLateness, 300, 50, 700, "")
	iv = r.flush(t0.Add(2*time.Second), 1)
	if iv.Requests != 1 {
		t.Errorf("second interval: %d requests, want 1", iv.Requests)
	}
	if _, ok := iv.Latency[r.labels[0].row.Tag]; ok {
		t.Errorf("second interval has a histogram for the first label, which had no sample in it")
	}
	res := r.result(Summary{})
	tot := res.Summary.Total
	if tot.Samples != 4 || tot.Errors != 1 || tot.SentBytes != 800 || tot.ReceivedBytes != 500 {
		t.Errorf("total: %d samples, %d errors, %d bytes sent, %d received; want 4, 1, 800, 500", tot.Samples, tot.Errors, tot.SentBytes, tot.ReceivedBytes)
	}
	want := map[int]int64{200: 2, 404: 1, 700: 1}
	if len(tot.Statuses) != len(want) {
		t.Errorf("total statuses = %v, want %v", tot.Statuses, want)
	}
	for code, n := range want {
		if tot.Statuses[code] != n {
			t.Errorf("total statuses = %v, want %v", tot.Statuses, want)
		}
	}
	if got := res.latency[TotalTag].TotalCount(); got != 4 {
		t.Errorf("total latency histogram holds %d samples, want 4", got)
	}
	if a, b := res.Summary.Labels[0], res.Summary.Labels[1]; a.Samples != 2 || b.Samples != 2 || len(a.Statuses) != 2 || len(b.Statuses) != 2 {
		t.Errorf("labels: %d and %d samples, statuses %v and %v; want 2 and 2, two codes each", a.Samples, b.Samples, a.Statuses, b.Statuses)
	}
	if len(tot.Reasons) != 1 || tot.Reasons[0] != (ReasonCount{"status 404", 1}) {
		t.Errorf("total reasons = %v, want one status 404", tot.Reasons)
	}
	// result is safe to call again: the total is summed afresh.
	if again := r.result(Summary{}).Summary.Total; again.SentBytes != 800 || again.Statuses[200] != 2 {
		t.Errorf("a second result's total: %d bytes sent, statuses %v", again.SentBytes, again.Statuses)
	}
}

// TestHlogMaxKept: the interval logs written from the maxima kept when
// the intervals were closed are the same, byte for byte, as those
// written by decoding every histogram (as for a result read back).
func TestHlogMaxKept(t *testing.T) {
	r := newRecorder([]string{"GET /a", "GET /b"}, 10, 0)
	t0 := time.Unix(1_800_000_000, 0)
	r.begin(t0)
	for i := range 3 {
		for j := range 50 {
			d := time.Duration(100_000 + 7_919*j*(i+1))
			late := time.Duration(j * 1_000)
			if i == 1 {
				late = noLateness // an interval without lateness
			}
			r.record(j%2*(i%2), d, d/2, late, 10, 20, 200, "")
		}
		r.flush(t0.Add(time.Duration(i+1)*time.Second), 2)
	}
	res := r.result(Summary{Start: t0})
	dir := t.TempDir()
	kept, decoded := filepath.Join(dir, "kept"), filepath.Join(dir, "decoded")
	if err := res.WriteDir(kept); err != nil {
		t.Fatal(err)
	}
	for i := range res.Intervals {
		if res.Intervals[i].latMax == nil {
			t.Fatalf("interval %d kept no maxima", i)
		}
		res.Intervals[i].latMax, res.Intervals[i].svcMax, res.Intervals[i].lateMax = nil, nil, 0
	}
	if err := res.WriteDir(decoded); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{LatencyLogFile, ServiceLogFile, LatenessLogFile} {
		a, err := os.ReadFile(filepath.Join(kept, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(decoded, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs:\nfrom the kept maxima:\n%s\nfrom decoding:\n%s", f, a, b)
		}
		if bytes.Count(a, []byte("\nTag=")) < 3 {
			t.Errorf("%s has fewer than three intervals:\n%s", f, a)
		}
	}
}
