// Command tiny is a test service for package service: it serves /health and
// /env, and misbehaves on demand through MODE.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if os.Getenv("TINY_CHILD") == "1" {
		time.Sleep(5 * time.Minute) // a spawned helper process, killed with the group
		return
	}
	mode := os.Getenv("MODE")
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "boom: cannot start, missing widget")
		os.Exit(3)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	}
	if mode == "spawn" || mode == "ignore-term" {
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "TINY_CHILD=1")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("child", child.Process.Pid)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(os.Getenv("HOST"), os.Getenv("PORT")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if mode == "unhealthy" {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"database unreachable"}`))
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("GET /env", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(os.Environ())
	})
	srv := &http.Server{Handler: mux}
	term := make(chan os.Signal, 1)
	if mode != "ignore-term" {
		signal.Notify(term, syscall.SIGTERM)
	}
	go func() {
		<-term
		fmt.Println("bye")
		srv.Close()
	}()
	fmt.Println("listening on", l.Addr())
	if err := srv.Serve(l); err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
