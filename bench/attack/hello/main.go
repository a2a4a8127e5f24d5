// Command hello is the minimal net/http server the generator benchmarks
// attack: GET / returns "Hello, World!". It prints its address on stdout.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr().String())
	os.Stdout.Sync()
	body := []byte("Hello, World!")
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})))
}
