package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkUppercase measures the whole in-process path of POST
// /uppercase (routing, metrics, decoding, upper-casing, encoding) without
// the network.
func BenchmarkUppercase(b *testing.B) {
	h := newHandler(nil, nil, prometheus.NewRegistry(), nil, new(atomic.Bool))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/uppercase", strings.NewReader(`{"s":"hello world"}`))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
