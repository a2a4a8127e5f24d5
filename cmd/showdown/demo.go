package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/showdownlab/showdown/load"
)

func init() {
	register(&command{
		name:    "demo",
		summary: "attack a small built-in server for ~20s (open, then closed model) and show the reports",
		run:     runDemo,
	})
}

func runDemo(st *state, args []string) error {
	fs := newFlagSet(st, "demo", "[flags]")
	out := fs.String("out", "", "results `dir` (default results/<UTC time>-demo)")
	scale := fs.Duration("duration", 8*time.Second, "measured `time` of each of the two runs")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("demo takes no arguments, got %q", fs.Args())}
	}
	if *out == "" {
		*out = resultDir("demo")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: demoHandler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(st.stdout, "demo target: %s (GET /hello, GET /work: ~2ms of work)\n\n", base)

	runs := []struct {
		title, name string
		model       load.Model
		target      string
		warmup      load.WarmupPhase
	}{
		{"Open model: 500 requests/s, latency measured from each request's intended send time",
			"open", load.OpenModel{Rate: 500, Duration: *scale}, base + "/hello", load.WarmupPhase{Duration: time.Second}},
		{"Closed model: 20 users with 10ms think time, ramped up over 2s",
			"closed", load.ClosedModel{Users: 20, RampUp: 2 * time.Second, Duration: *scale, ThinkTime: 10 * time.Millisecond}, base + "/work", load.WarmupPhase{}},
	}
	for _, r := range runs {
		fmt.Fprintf(st.stdout, "== %s\n", r.title)
		p := &attackPlan{
			sc:     &load.Target{URL: r.target},
			model:  r.model,
			opts:   []load.Option{load.WithWarmup(r.warmup)},
			out:    filepath.Join(*out, r.name),
			target: r.target,
			record: map[string]string{"demo": r.name, "url": r.target},
		}
		if err := attack(st, p); err != nil {
			var ee exitError
			if errors.As(err, &ee) && ee.code == exitInterrupted {
				return err
			}
			return err
		}
		fmt.Fprintln(st.stdout)
	}
	fmt.Fprintf(st.stdout, "Try: bin/showdown attack --rate 2000 --duration 10s --latency URL, or --users 50 --duration 10s URL\n")
	return nil
}

func demoHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Hello, World!")
	})
	mux.HandleFunc("GET /work", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		io.WriteString(w, `{"ok":true}`)
	})
	return mux
}
