// Command hello is the minimal net/http server the generator benchmarks
// attack: GET / returns "Hello, World!". It prints its address on stdout.
//
// With -stall it stalls like a server in a garbage-collection pause: for
// -stall at the end of every -every period (from its start) it answers
// nothing, and every request that arrives or waits meanwhile is answered
// when the stall ends. A generator that counts latency from the intended
// send time sees the stall in its p99; one that waits for the stalled
// responses before sending more (coordinated omission) hides it.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	stall := flag.Duration("stall", 0, "stop answering for this `long` once every -every (0: never)")
	every := flag.Duration("every", 5*time.Second, "the stall's `period`")
	flag.Parse()
	if *stall < 0 || *stall > 0 && *every <= *stall {
		fmt.Fprintf(os.Stderr, "hello: -stall %s must be at least 0 and shorter than -every %s (e.g. -stall 1s -every 5s)\n", *stall, *every)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	fmt.Println(ln.Addr().String())
	os.Stdout.Sync()
	body := []byte("Hello, World!")
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if *stall > 0 {
			time.Sleep(stallLeft(time.Since(start), *stall, *every))
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})))
}

// stallLeft is how long a request at elapsed since the start waits: the
// rest of the stall it falls in, which is the last stall of each period.
func stallLeft(elapsed, stall, every time.Duration) time.Duration {
	into := elapsed % every
	if into < every-stall {
		return 0
	}
	return every - into
}
