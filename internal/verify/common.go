package verify

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// commonStages checks what every service serves, whatever its workloads.
func commonStages(t Target) []stage {
	var unknown []check
	for _, w := range t.Workloads {
		switch w {
		case "string", "bank", "users", "sku":
		default:
			w := w
			unknown = append(unknown, check{name: "target/workload " + w, run: func(context.Context, *session) error {
				return fmt.Errorf("unknown workload %q: the contract has string, bank, users and sku", w)
			}})
		}
	}
	cs := append(unknown, rows("", commonRows())...)
	cs = append(cs,
		check{name: "metrics counts requests", run: checkMetricsMove},
		keepAliveCheck("", "keep-alive: 404 and 405 with bodies, then /health", nil, func() []step {
			return []step{
				{post("/no-such-endpoint", `{"pad":"`+strings.Repeat("x", 4000)+`"}`), 404},
				{post("/health", `{"pad":"`+strings.Repeat("y", 4000)+`"}`), 405},
				{get("/health"), 200},
				{get("/no/such/path"), 404},
				{get("/health"), 200},
			}
		}),
	)
	return []stage{fixed(cs...)}
}

func commonRows() []row {
	return []row{
		{name: "health -> 200 {status:ok}", req: get("/health"), status: []int{200},
			body: fields(map[string]any{"status": "ok"})},
		{name: "metrics -> 200 with the pinned names", req: get("/metrics"), status: []int{200}, metrics: true,
			body: metricNames},
		{name: "unknown path -> 404", req: get("/no/such/path"), status: []int{404}},
		{name: "root path -> 404", req: get("/"), status: []int{404}},
		{name: "unknown path POST -> 404", req: post("/no-such-endpoint", `{}`), status: []int{404}},
		{name: "POST /health -> 405", req: post("/health", `{}`), status: []int{405}, allow: "GET"},
		{name: "DELETE /health -> 405", req: request{method: "DELETE", path: "/health"}, status: []int{405}, allow: "GET"},
		{name: "POST /metrics -> 405", req: post("/metrics", `{}`), status: []int{405}, allow: "GET"},
		{name: "health path case differs -> 404", req: get("/HEALTH"), status: []int{404}},
		{name: "health trailing slash -> 404", req: get("/health/"), status: []int{404}},
		// A path that climbs above the root cannot be normalised: 400 is fair too.
		{name: "path traversal /../../etc/passwd -> 404 or 400", req: get("/static/../../etc/passwd"), status: []int{404, 400}},
		// Tomcat refuses %00 before any handler: protocol level.
		{name: "encoded NUL in path -> no 5xx", req: get("/health%00"), protocol: true},
		// Malformed HTTP: the server library may answer before any handler.
		{name: "garbage request line -> no 5xx", req: request{raw: "HELLO\r\n\r\n"}, protocol: true},
		{name: "8 KiB path -> no 5xx", req: get("/" + strings.Repeat("a", 8<<10)), protocol: true},
		{name: "two different Content-Length headers -> no 5xx", protocol: true,
			req: request{raw: "POST /health HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}"}},
		{name: "bad chunked encoding -> no 5xx", protocol: true,
			req: request{raw: "POST /health HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", half: true}},
		{name: "HTTP/1.0 health -> 200", req: request{raw: "GET /health HTTP/1.0\r\n\r\n", method: "GET"}, status: []int{200},
			body: fields(map[string]any{"status": "ok"})},
		{name: "health still 200 after malformed requests", req: get("/health"), status: []int{200},
			body: fields(map[string]any{"status": "ok"})},
	}
}

// metricNames checks that /metrics exposes the contract's metric names.
func metricNames(resp *response) error {
	ss := parseMetrics(string(resp.body))
	for _, name := range []string{"http_requests_total", "http_request_duration_seconds_bucket", "http_request_duration_seconds_count"} {
		if len(ss.named(name)) == 0 {
			return fmt.Errorf("/metrics has no %s series", name)
		}
	}
	for _, s := range ss.named("http_requests_total") {
		if _, ok := s.labels["route"]; !ok {
			return fmt.Errorf("http_requests_total series without a route label: %s", s.line)
		}
		if _, ok := s.labels["status"]; !ok {
			return fmt.Errorf("http_requests_total series without a status label: %s", s.line)
		}
	}
	return nil
}

// checkMetricsMove proves the request counter counts: two requests to an
// unknown path raise it by at least two, under the route "unmatched",
// never under the concrete path.
func checkMetricsMove(ctx context.Context, s *session) error {
	before, err := s.metrics(ctx)
	if err != nil {
		return err
	}
	const probe = "/verify-unmatched-probe"
	for range 2 {
		if r := s.do(ctx, get(probe)); r.none || r.status != 404 {
			return fmt.Errorf("GET %s: want 404", probe)
		}
	}
	unmatched := func(ss series) float64 {
		return ss.sum("http_requests_total", map[string]string{"route": "unmatched", "status": "404"})
	}
	after, ok, err := s.metricsUntil(ctx, func(after series) bool { return unmatched(after)-unmatched(before) >= 2 })
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf(`http_requests_total{route="unmatched",status="404"} rose by %v within 0.5 s after two requests to an unknown path, want 2 or more`, unmatched(after)-unmatched(before))
	}
	for _, x := range after.named("http_requests_total") {
		if strings.Contains(x.labels["route"], "verify-unmatched-probe") {
			return fmt.Errorf("a route label holds the concrete path, want \"unmatched\": %s", x.line)
		}
	}
	return nil
}

// routeLabelCheck returns a check that a request to a concrete path of
// the route pattern is counted under the pattern.
func routeLabelCheck(w, pattern string, req func() (request, error)) check {
	return check{workload: w, name: w + "/metrics route label " + pattern, run: func(ctx context.Context, s *session) error {
		r, err := req()
		if err != nil {
			return skipError(err.Error())
		}
		before, err := s.metrics(ctx)
		if err != nil {
			return err
		}
		resp := s.do(ctx, r)
		if resp.none {
			return fmt.Errorf("no response: %v", resp.err)
		}
		match := map[string]string{"route": pattern}
		after, ok, err := s.metricsUntil(ctx, func(after series) bool {
			return after.sum("http_requests_total", match)-before.sum("http_requests_total", match) >= 1
		})
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf(`http_requests_total{route=%q} did not rise within 0.5 s after %s %s`, pattern, r.method, r.path)
		}
		if after.sum("http_request_duration_seconds_count", match) < 1 {
			return fmt.Errorf(`no http_request_duration_seconds_count{route=%q}`, pattern)
		}
		for _, x := range after.named("http_requests_total") {
			if r.path != pattern && x.labels["route"] == r.path {
				return fmt.Errorf("a route label holds the concrete path %q, want the pattern %q: %s", r.path, pattern, x.line)
			}
		}
		return nil
	}}
}

// metricsUntil scrapes /metrics until rose holds of it, up to 10 times
// 50 ms apart: a server may count a request just after writing its
// response (java-helidon does), so a scrape at once can race it. ok is
// false when rose never held; after is then the last scrape.
func (s *session) metricsUntil(ctx context.Context, rose func(series) bool) (after series, ok bool, err error) {
	for i := range 10 {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		if after, err = s.metrics(ctx); err != nil {
			return nil, false, err
		}
		if rose(after) {
			return after, true, nil
		}
	}
	return after, false, nil
}

func (s *session) metrics(ctx context.Context) (series, error) {
	resp := s.do(ctx, get("/metrics"))
	if resp.none || resp.err != nil {
		return nil, fmt.Errorf("GET /metrics: %v", resp.err)
	}
	if resp.status != 200 {
		return nil, fmt.Errorf("GET /metrics: status %d, want 200", resp.status)
	}
	return parseMetrics(string(resp.body)), nil
}

// sample is one line of Prometheus text exposition.
type sample struct {
	name   string
	labels map[string]string
	value  float64
	line   string
}

type series []sample

func (ss series) named(name string) series {
	var out series
	for _, s := range ss {
		if s.name == name {
			out = append(out, s)
		}
	}
	return out
}

// sum adds the values of the series named name whose labels include match.
func (ss series) sum(name string, match map[string]string) float64 {
	var t float64
	for _, s := range ss.named(name) {
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
			}
		}
		if ok {
			t += s.value
		}
	}
	return t
}

// parseMetrics reads Prometheus text format, skipping what it cannot read.
func parseMetrics(text string) series {
	var out series
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s := sample{labels: map[string]string{}, line: line}
		rest := line
		if i := strings.IndexAny(rest, "{ "); i < 0 {
			continue
		} else {
			s.name, rest = rest[:i], rest[i:]
		}
		if strings.HasPrefix(rest, "{") {
			var ok bool
			rest, ok = parseLabels(rest[1:], s.labels)
			if !ok {
				continue
			}
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		s.value = v
		out = append(out, s)
	}
	return out
}

// parseLabels reads `k="v",...}` into m and returns what follows the brace.
func parseLabels(s string, m map[string]string) (string, bool) {
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return s[1:], true
		}
		eq := strings.Index(s, "=")
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			return "", false
		}
		key := strings.TrimSpace(s[:eq])
		s = s[eq+2:]
		var val strings.Builder
		i := 0
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		if i >= len(s) {
			return "", false
		}
		m[key] = val.String()
		s = s[i+1:]
	}
}
