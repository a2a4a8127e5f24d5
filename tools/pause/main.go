// Command pause is the sandbox process of the single-node cluster's pods
// (scripts/cluster.sh): it holds the pod's namespaces open, reaps any
// child handed to it as the pod's first process, and exits on SIGINT or
// SIGTERM. Built static (CGO_ENABLED=0) into an image of its own, it is
// the image the container runtime is configured with, so that no pod
// sandbox is ever pulled.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
