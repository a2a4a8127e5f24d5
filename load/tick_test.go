//go:build linux

package load

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestEnginesAgree runs the same attacks on every engine (see engines)
// against awkward targets.
func TestEnginesAgree(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("part1"))
		w.(http.Flusher).Flush()
		w.Write([]byte("part2"))
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	mux.HandleFunc("/teapot", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	})
	srv := httptest.NewUnstartedServer(mux)
	// Idle keep-alive connections are closed by the server quickly, so
	// the engines must notice and reconnect.
	srv.Config.IdleTimeout = 20 * time.Millisecond
	srv.Start()
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	tests := []struct {
		url    string
		opts   []Option
		reason string // the only error reason, or "" for none
	}{
		{srv.URL + "/chunked", nil, ""},                                               // chunked bodies
		{srv.URL + "/close", nil, ""},                                                 // Connection: close on every response
		{srv.URL + "/teapot", nil, "status 418"},                                      // non-2xx is an error
		{srv.URL + "/slow", []Option{Timeout(100 * time.Millisecond)}, ReasonTimeout}, // timeouts
		{deadURL + "/", nil, ReasonRefused},                                           // nobody listening
	}
	for _, tt := range tests {
		for _, engine := range engines {
			sc, m, opts := engineCase(engine, &Target{URL: tt.url}, OpenModel{Rate: 50, Duration: 400 * time.Millisecond}, ClosedModel{Users: 3, Iterations: 4})
			opts = append(opts, tt.opts...)
			res, err := NewAttacker(opts...).Attack(context.Background(), sc, m)
			if err != nil {
				t.Fatal(err)
			}
			tot := res.Summary.Total
			// Open: 20 scheduled; closed: 3 users x 4 iterations.
			want := int64(20)
			if _, closed := m.(ClosedModel); closed {
				want = 12
			}
			if tot.Samples+res.Summary.Dropped != want {
				t.Errorf("%s %s: %d samples + %d dropped, want %d", engine, tt.url, tot.Samples, res.Summary.Dropped, want)
			}
			switch {
			case tt.reason == "" && tot.Errors != 0:
				t.Errorf("%s %s: errors %+v", engine, tt.url, tot.Reasons)
			case tt.reason != "" && (len(tot.Reasons) != 1 || tot.Reasons[0].Reason != tt.reason || tot.Errors != tot.Samples):
				t.Errorf("%s %s: reasons %+v of %d samples, want all %q", engine, tt.url, tot.Reasons, tot.Samples, tt.reason)
			}
		}
	}
}

// TestKernelTimestamp checks that TCP receive timestamps arrive and parse:
// without them the tick engine would time responses by its ticks.
func TestKernelTimestamp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	if err := syscall.Connect(fd, sa); err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The kernel turns receive timestamps on lazily (a deferred static
	// key) the first time a socket asks, so the first segments may lack
	// them: try a few times.
	var ts time.Time
	var before, after time.Time
	buf, oob := make([]byte, 16), make([]byte, 128)
	for i := 0; i < 50 && ts.IsZero(); i++ {
		before = time.Now()
		srv.Write([]byte("x"))
		n, oobn, _, _, err := syscall.Recvmsg(fd, buf, oob, 0)
		after = time.Now()
		if err != nil || n != 1 {
			t.Fatalf("recvmsg: %d, %v", n, err)
		}
		ts, _ = kernelTime(oob[:oobn])
		if ts.IsZero() {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if ts.IsZero() {
		t.Fatal("no SO_TIMESTAMPNS control message in 50 tries")
	}
	// Wall clocks, so allow a little slack.
	if ts.Before(before.Add(-time.Second)) || ts.After(after.Add(time.Second)) {
		t.Errorf("kernel timestamp %v not between %v and %v", ts, before, after)
	}
}

// TestHistView: the encoder's view of a histogram's counts and ratio is
// Export's, without the copy (a dependency whose layout changed fails
// here, where the encoder would quietly fall back to copying).
func TestHistView(t *testing.T) {
	if !histFields.ok {
		t.Fatal("hdrhistogram.Histogram has no counts []int64 and conversionRatio float64 fields: histView copies")
	}
	h := hdrhistogram.Import(&hdrhistogram.Snapshot{LowestTrackableValue: histLowest, HighestTrackableValue: histHighest,
		SignificantFigures: histDigits, IntegerToDoubleConversionRatio: 0.25})
	for _, v := range []int64{1000, 1000, 5e6, 7e9, 3e12} {
		h.RecordValue(v)
	}
	counts, ratio := histView(h)
	want := h.Export()
	if !slices.Equal(counts, want.Counts) || ratio != want.IntegerToDoubleConversionRatio {
		t.Fatalf("view: %d counts, ratio %v; Export: %d, %v", len(counts), ratio, len(want.Counts), want.IntegerToDoubleConversionRatio)
	}
	back, err := DecodeHistogram(encodeHist(h))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equals(h) || back.Export().IntegerToDoubleConversionRatio != 0.25 {
		t.Errorf("decoded: count %d, ratio %v; want %d, 0.25", back.TotalCount(), back.Export().IntegerToDoubleConversionRatio, h.TotalCount())
	}
}

func TestEncodeHist(t *testing.T) {
	for _, values := range [][]int64{
		nil,                          // empty
		{1000},                       // one value
		{1000, 1000, 5e6, 7e9, 3e12}, // spread over the range, with zero runs
	} {
		h := newHist()
		for _, v := range values {
			h.RecordValue(v)
		}
		back, err := DecodeHistogram(encodeHist(h))
		if err != nil {
			t.Fatalf("%v: %v", values, err)
		}
		if !back.Equals(h) {
			t.Errorf("%v: decoded histogram differs: count %d max %d, want %d %d", values, back.TotalCount(), back.Max(), h.TotalCount(), h.Max())
		}
	}
}
