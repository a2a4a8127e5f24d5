// Command clients measures HTTP client candidates for the load engine in
// the same closed loop (N connections, each sending GET / back to back):
// net/http's Transport, fasthttp, and the engine's own lean client (through
// package load). It prints requests/s and process CPU per request. It is a
// separate module so fasthttp does not become a dependency of showdown.
//
//	go run . -url http://127.0.0.1:PORT/ -c 50 -d 5s -client all
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/load"
	"github.com/valyala/fasthttp"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	url := flag.String("url", "", "target `URL`")
	c := flag.Int("c", 50, "connections")
	d := flag.Duration("d", 5*time.Second, "duration")
	client := flag.String("client", "all", "nethttp, fasthttp, showdown, or all (each in its own process, pinned with -cpu)")
	pin := flag.String("cpu", "1", "CPU list for the candidates (taskset) with -client all")
	flag.Parse()
	if *client == "all" {
		self, _ := os.Executable()
		for _, cand := range []string{"nethttp", "fasthttp", "showdown"} {
			cmd := exec.Command("taskset", "-c", *pin, self, "-url", *url, "-c", fmt.Sprint(*c), "-d", d.String(), "-client", cand)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			cmd.Run()
		}
		return
	}
	var n atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	c0, t0 := cpu(), time.Now()
	switch *client {
	case "showdown":
		res, err := load.NewAttacker().Attack(context.Background(), &load.Target{URL: *url}, load.ClosedModel{Users: *c, Duration: *d})
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		n.Store(res.Summary.Total.Samples - res.Summary.Total.Errors)
	case "nethttp":
		tr := &http.Transport{MaxIdleConnsPerHost: *c, MaxConnsPerHost: *c}
		hc := &http.Client{Transport: tr}
		for i := 0; i < *c; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					resp, err := hc.Get(*url)
					if err != nil {
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					n.Add(1)
				}
			}()
		}
	case "fasthttp":
		fc := &fasthttp.Client{MaxConnsPerHost: *c}
		for i := 0; i < *c; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				req.SetRequestURI(*url)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := fc.Do(req, resp); err == nil {
						n.Add(1)
					}
				}
			}()
		}
	}
	if *client != "showdown" {
		time.Sleep(*d)
		close(stop)
		wg.Wait()
	}
	el, used := time.Since(t0), cpu()-c0
	fmt.Printf("%-9s %8.0f req/s  %6.1f µs CPU/request  (%d requests, %d connections, %s)\n",
		*client, float64(n.Load())/el.Seconds(), float64(used.Microseconds())/float64(max(n.Load(), 1)), n.Load(), *c, el.Round(time.Millisecond))
}
