// Command server is the string workload's uppercase made to leak on
// purpose, for the lab's leak check: every answer is what the contract
// asks, but each request keeps LEAK_BYTES of memory (default 1024,
// written so the pages are resident) and every LEAK_FD_EVERY-th request
// (default 50; 0: never) opens /dev/null and never closes it. With
// LEAK_BYTES=0 and LEAK_FD_EVERY=0 it leaks nothing (the negative test).
package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	leakBytes := envInt("LEAK_BYTES", 1024)
	fdEvery := envInt("LEAK_FD_EVERY", 50)
	var mu sync.Mutex
	var kept [][]byte
	var files []*os.File
	n := 0
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("POST /uppercase", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			S *string `json:"s"`
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.S == nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"s is required"}`))
			return
		}
		mu.Lock()
		n++
		if leakBytes > 0 {
			b := make([]byte, leakBytes)
			for i := range b {
				b[i] = 1
			}
			kept = append(kept, b)
		}
		if fdEvery > 0 && n%fdEvery == 0 {
			if f, err := os.Open("/dev/null"); err == nil {
				files = append(files, f)
			}
		}
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"v": strings.ToUpper(*in.S)})
	})
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: mux}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	_ = srv.Serve(ln)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
