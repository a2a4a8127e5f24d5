// Command etcd runs one embedded etcd member on loopback for the API server
// test: it prints "ready" on stdout once it serves and stops on SIGTERM.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dir := flag.String("data-dir", "", "data directory (required)")
	client := flag.String("client-url", "http://127.0.0.1:2379", "URL clients connect to")
	peer := flag.String("peer-url", "http://127.0.0.1:2380", "URL of the member's peer port")
	flag.Parse()
	if *dir == "" {
		log.Fatal("etcd: --data-dir is required")
	}
	cu, err := url.Parse(*client)
	if err != nil {
		log.Fatalf("etcd: --client-url: %v", err)
	}
	pu, err := url.Parse(*peer)
	if err != nil {
		log.Fatalf("etcd: --peer-url: %v", err)
	}
	cfg := embed.NewConfig()
	cfg.Dir = *dir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("etcd: %v", err)
	}
	defer e.Close()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("ready")
	case err := <-e.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
		return
	}
	select {
	case err := <-e.Err():
		log.Fatalf("etcd: %v", err)
	case <-stop:
	}
}
