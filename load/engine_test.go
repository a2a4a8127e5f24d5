package load

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func helloServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "nope", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenModel(t *testing.T) {
	srv := helloServer(t)
	res, err := NewAttacker().Attack(context.Background(), &Target{URL: srv.URL + "/x"}, OpenModel{Rate: 200, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if got, want := s.Total.Samples+s.Dropped, int64(200); got != want {
		t.Errorf("samples %d + dropped %d = %d, want %d scheduled", s.Total.Samples, s.Dropped, got, want)
	}
	if s.Total.Errors != 0 || len(s.Labels) != 1 || s.Labels[0].Label != "GET /x" {
		t.Errorf("errors %d, labels %+v; want 0 errors and one label GET /x", s.Total.Errors, s.Labels)
	}
	if s.Model != "open" || s.TargetRate != 200 || s.AchievedRate <= 0 {
		t.Errorf("model %q target %v achieved %v", s.Model, s.TargetRate, s.AchievedRate)
	}
	if h := res.Latency(""); h.TotalCount() != s.Total.Samples {
		t.Errorf("histogram holds %d, want %d samples", h.TotalCount(), s.Total.Samples)
	}
	var n int64
	for _, iv := range res.Intervals {
		n += iv.Requests
	}
	if n != s.Total.Samples {
		t.Errorf("intervals hold %d requests, want %d", n, s.Total.Samples)
	}
	// Every request was sent on a due time: its lateness is recorded, and
	// is part of its latency.
	if h := res.Lateness(); h == nil || h.TotalCount() != s.Total.Samples || s.Lateness.Max > s.Total.Latency.Max {
		t.Errorf("lateness %+v of %v samples, latency %+v", s.Lateness, h, s.Total.Latency)
	}
}

// stepScenario is a two-step scenario: "list" GETs /x, "fail" GETs /fail
// (a 503) on odd iterations.
type stepScenario struct {
	url   string
	users sync.Map
}

func (s *stepScenario) Steps() []string { return []string{"list", "fail"} }
func (s *stepScenario) NewUser(n int) User {
	if _, dup := s.users.LoadOrStore(n, true); dup {
		panic("user number reused")
	}
	return stepUser{s.url}
}

type stepUser struct{ url string }

func (u stepUser) Request(iter, step int, req *Request) error {
	req.Method, req.URL = "GET", u.url+"/x"
	if step == 1 && iter%2 == 1 {
		req.URL = u.url + "/fail"
	}
	return nil
}

func (u stepUser) Check(iter, step int, resp *Response) error {
	if step == 0 && string(resp.Body) != "hello" {
		return &CheckError{Reason: "body is not hello"}
	}
	return nil
}

func TestClosedModelIterations(t *testing.T) {
	srv := helloServer(t)
	sc := &stepScenario{url: srv.URL}
	res, err := NewAttacker().Attack(context.Background(), sc, ClosedModel{Users: 4, Iterations: 6, RampUp: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	// 4 users x 6 iterations x 2 steps; half of the "fail" steps get a 503.
	if s.Total.Samples != 48 || s.Labels[0].Samples != 24 || s.Labels[1].Errors != 12 {
		t.Fatalf("samples %d (list %d), fail errors %d; want 48, 24, 12", s.Total.Samples, s.Labels[0].Samples, s.Labels[1].Errors)
	}
	if got := s.Labels[1].ErrorPercent; got != 50 {
		t.Errorf("fail: error %% = %v, want 50", got)
	}
	if r := s.Labels[1].Reasons; len(r) != 1 || r[0].Reason != "status 503" || r[0].Count != 12 {
		t.Errorf("reasons %+v, want 12 x status 503", r)
	}
	if s.Users != 4 || s.Model != "closed" {
		t.Errorf("users %d model %q", s.Users, s.Model)
	}
	// Every answer is counted by its status, a failed one too.
	if l0, l1 := s.Labels[0], s.Labels[1]; l0.Answered(200) != 24 || l1.Answered(200) != 12 || l1.Answered(503) != 12 || s.Total.Unanswered() != 0 {
		t.Errorf("statuses %v and %v, unanswered %d; want 24 200s, then 12 200s and 12 503s, none unanswered", l0.Statuses, l1.Statuses, s.Total.Unanswered())
	}
}

// TestStatusCountsTick: the open model's engine for one request counts
// answers by status too, and requests that got none apart.
func TestStatusCountsTick(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	res, err := NewAttacker().Attack(context.Background(), &Target{URL: srv.URL}, OpenModel{Rate: 200, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Summary.Total
	if tot.Samples == 0 || tot.Answered(404) != tot.Samples || tot.Unanswered() != 0 {
		t.Errorf("samples %d, statuses %v; want every one a 404", tot.Samples, tot.Statuses)
	}
	srv.Close()
	res, err = NewAttacker().Attack(context.Background(), &Target{URL: srv.URL}, OpenModel{Rate: 100, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if tot := res.Summary.Total; tot.Samples == 0 || len(tot.Statuses) != 0 || tot.Unanswered() != tot.Samples {
		t.Errorf("refused: samples %d, statuses %v, unanswered %d; want all unanswered", tot.Samples, tot.Statuses, tot.Unanswered())
	}
}

func TestClosedModelDurationAndCheckErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "goodbye")
	}))
	defer srv.Close()
	res, err := NewAttacker(WithWarmup(WarmupPhase{Requests: 5})).Attack(context.Background(), &stepScenario{url: srv.URL},
		ClosedModel{Users: 3, Duration: 500 * time.Millisecond, ThinkTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	// Every iteration fails its first step's check, so step 2 never runs.
	if s.Labels[0].Samples == 0 || s.Labels[0].Errors != s.Labels[0].Samples || s.Labels[1].Samples != 0 {
		t.Errorf("list %d samples %d errors, fail %d samples; want all list samples failed and no fail samples",
			s.Labels[0].Samples, s.Labels[0].Errors, s.Labels[1].Samples)
	}
	if r := s.Total.Reasons; len(r) != 1 || r[0].Reason != "body is not hello" {
		t.Errorf("reasons %+v", r)
	}
}

func TestRefusedTarget(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	res, err := NewAttacker().Attack(context.Background(), &Target{URL: url}, ClosedModel{Users: 2, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Summary.Total
	// The users back off after each refusal instead of spinning.
	if tot.Samples == 0 || tot.Samples > 20 || tot.Errors != tot.Samples {
		t.Errorf("samples %d errors %d; want a few, all failed", tot.Samples, tot.Errors)
	}
	if len(tot.Reasons) != 1 || tot.Reasons[0].Reason != ReasonRefused {
		t.Errorf("reasons %+v, want only %q", tot.Reasons, ReasonRefused)
	}
}

// TestCoordinatedOmission attacks a target that stalls for a second with
// one request in flight at a time: the requests queued behind the stall
// must show it in their latency, while their service time stays short.
func TestCoordinatedOmission(t *testing.T) {
	var t0 atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Unix(0, t0.Load())
		if el := time.Since(start); el >= 500*time.Millisecond && el < 1500*time.Millisecond {
			time.Sleep(1500*time.Millisecond - el)
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	t0.Store(time.Now().UnixNano())
	res, err := NewAttacker(MaxInflight(1)).Attack(context.Background(), &Target{URL: srv.URL}, OpenModel{Rate: 200, Duration: 2500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	lat, svc := res.Summary.Total.Latency, res.Summary.Total.Service
	if lat.P99 < 500 {
		t.Errorf("corrected p99 = %.1fms, want >= 500ms: the stall is hidden", lat.P99)
	}
	if svc.P99 > lat.P99/4 {
		t.Errorf("service-time p99 = %.1fms, want far below the corrected p99 %.1fms", svc.P99, lat.P99)
	}
	if res.Summary.Late == 0 {
		t.Error("no late sends counted behind a 1 s stall")
	}
}

func TestInterruptKeepsResults(t *testing.T) {
	srv := helloServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(400*time.Millisecond, cancel)
	res, err := NewAttacker().Attack(ctx, &Target{URL: srv.URL}, ClosedModel{Users: 2, Duration: time.Minute, ThinkTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summary.Interrupted || res.Summary.Total.Samples == 0 || res.Summary.Total.Errors != 0 {
		t.Errorf("interrupted %v samples %d errors %d; want interrupted with samples and no errors from the abort",
			res.Summary.Interrupted, res.Summary.Total.Samples, res.Summary.Total.Errors)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel2)
	res, err = NewAttacker().Attack(ctx2, &Target{URL: srv.URL}, OpenModel{Rate: 100, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summary.Interrupted || res.Summary.Total.Samples == 0 || res.Summary.Dropped != 0 {
		t.Errorf("open: interrupted %v samples %d dropped %d", res.Summary.Interrupted, res.Summary.Total.Samples, res.Summary.Dropped)
	}
}

func TestHlogRoundTrip(t *testing.T) {
	srv := helloServer(t)
	res, err := NewAttacker().Attack(context.Background(), &stepScenario{url: srv.URL}, ClosedModel{Users: 2, Duration: 1200 * time.Millisecond, ThinkTime: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := res.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, LatencyLogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int64{}
	rd := hdrhistogram.NewHistogramLogReader(f)
	for i := 0; i < 1000; i++ {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		counts[h.Tag()] += h.TotalCount()
	}
	s := res.Summary
	want := map[string]int64{TotalTag: s.Total.Samples, "list": s.Labels[0].Samples, "fail": s.Labels[1].Samples}
	for tag, n := range want {
		if counts[tag] != n {
			t.Errorf("hlog tag %q holds %d samples, summary says %d", tag, counts[tag], n)
		}
	}
	back, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Summary.Total.Samples != s.Total.Samples || back.Latency("").TotalCount() != s.Total.Samples ||
		len(back.Intervals) != len(res.Intervals) || back.Service("list").TotalCount() != s.Labels[0].Samples {
		t.Errorf("read back %d samples, %d in histogram, %d intervals; want %d, %d", back.Summary.Total.Samples,
			back.Latency("").TotalCount(), len(back.Intervals), s.Total.Samples, len(res.Intervals))
	}
	if back.Lateness() != nil || res.Lateness() != nil || s.Lateness != (Stats{}) {
		t.Errorf("a closed-model run recorded send lateness %+v", s.Lateness)
	}
	if _, err := os.Stat(filepath.Join(dir, LatenessLogFile)); err == nil {
		t.Errorf("a closed-model run wrote %s", LatenessLogFile)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, TimeseriesFile))
	if !strings.HasPrefix(string(csv), strings.Join(TimeseriesHeader, ",")+","+strings.Join(LatenessColumns, ",")+"\n") {
		t.Errorf("timeseries.csv starts %q", strings.SplitN(string(csv), "\n", 2)[0])
	}
}

// TestShardsMerge runs the same load once whole and once as shards, through
// files, and checks that the merged counts equal the whole run's.
func TestShardsMerge(t *testing.T) {
	srv := helloServer(t)
	for _, m := range []Model{
		ClosedModel{Users: 5, Iterations: 4},
		OpenModel{Rate: 300, Duration: time.Second},
	} {
		run := func(sh Shard) *Result {
			res, err := NewAttacker(WithShard(sh)).Attack(context.Background(), &stepScenario{url: srv.URL}, m)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := res.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			back, err := ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			return back
		}
		whole := run(Shard{1, 1})
		var parts []*Result
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := 1; i <= 3; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r := run(Shard{i, 3})
				mu.Lock()
				parts = append(parts, r)
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		merged, err := Merge(parts...)
		if err != nil {
			t.Fatal(err)
		}
		w, g := whole.Summary, merged.Summary
		if g.Total.Samples+g.Dropped != w.Total.Samples+w.Dropped || g.Total.Errors != w.Total.Errors {
			t.Errorf("%T: merged samples+dropped %d, errors %d; whole run %d, %d", m,
				g.Total.Samples+g.Dropped, g.Total.Errors, w.Total.Samples+w.Dropped, w.Total.Errors)
		}
		if _, closed := m.(ClosedModel); closed && !maps.Equal(g.Total.Statuses, w.Total.Statuses) {
			t.Errorf("merged statuses %v, whole run %v", g.Total.Statuses, w.Total.Statuses)
		}
		for i := range w.Labels {
			if g.Labels[i].Label != w.Labels[i].Label || g.Labels[i].Errors != w.Labels[i].Errors {
				t.Errorf("%T: label %d merged %+v, whole %+v", m, i, g.Labels[i], w.Labels[i])
			}
		}
		if merged.Latency("").TotalCount() != g.Total.Samples || len(g.Shards) != 3 {
			t.Errorf("%T: merged histogram %d samples, shards %v", m, merged.Latency("").TotalCount(), g.Shards)
		}
		var n int64
		for _, iv := range merged.Intervals {
			n += iv.Requests
		}
		if n != g.Total.Samples {
			t.Errorf("%T: merged intervals hold %d, want %d", m, n, g.Total.Samples)
		}
		// Lateness is recorded for each iteration's first step (open
		// model) and survives the files and the merge.
		if _, open := m.(OpenModel); open {
			if h := merged.Lateness(); h == nil || h.TotalCount() != g.Labels[0].Samples || g.Lateness.P99 == 0 {
				t.Errorf("merged lateness %+v in %v, want %d samples", g.Lateness, h, g.Labels[0].Samples)
			}
			if parts[0].Intervals[0].Lateness == "" || parts[0].Intervals[0].LatenessP99 == 0 {
				t.Errorf("interval lateness not read back: %+v", parts[0].Intervals[0])
			}
		}
		if cm, ok := m.(ClosedModel); ok && g.Users != cm.Users {
			t.Errorf("merged users %d, want %d", g.Users, cm.Users)
		}
	}
}

// TestQueuedNotLate runs the open model against a server slower than the
// rate allows on two connections, on every open-model engine: the sends
// wait for a free connection, and that wait is in their latency (from the
// due time) and counted as queued, not in the generator's send lateness.
func TestQueuedNotLate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	for _, engine := range []string{"tick", "loop", "goroutine"} {
		t.Run(engine, func(t *testing.T) {
			sc, m, opts := engineCase(engine, &Target{URL: srv.URL}, OpenModel{Rate: 400, Duration: 500 * time.Millisecond}, ClosedModel{})
			res, err := NewAttacker(append(opts, MaxInflight(2))...).Attack(context.Background(), sc, m)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			// Two connections at 20 ms each serve 100/s of the 400 due.
			if s.Queued < s.Total.Samples/2 {
				t.Errorf("%d of %d sends queued, want most", s.Queued, s.Total.Samples)
			}
			if s.Total.Latency.P50 < 100 {
				t.Errorf("latency p50 %.1f ms, want the queue's wait in it (over 100 ms)", s.Total.Latency.P50)
			}
			// Were the queue's wait in the lateness, it would be most of
			// the latency: over 80 ms at the median. The generator's own
			// lateness is well under that, even on a loaded machine,
			// where a stalled goroutine may reach tens of ms at p99 (a
			// CI run on two busy CPUs read 31 ms); the median and a
			// share of the latency tell the two apart without timing
			// the machine.
			if s.Lateness.P50 > 20 {
				t.Errorf("send lateness p50 %.1f ms, want the generator's own (under 20 ms), not the queue's", s.Lateness.P50)
			}
			if s.Lateness.P99 > s.Total.Latency.P99/2 {
				t.Errorf("send lateness p99 %.1f ms against latency p99 %.1f ms: the queue's wait is in the lateness", s.Lateness.P99, s.Total.Latency.P99)
			}
		})
	}
}
