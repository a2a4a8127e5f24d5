// Command coredns is CoreDNS with only the plugins a single-node test
// cluster's DNS needs (scripts/cluster.sh): kubernetes answers the
// cluster's Service names from the API server; errors, log, health and
// ready are the usual companions, bind keeps it on the pods' bridge;
// nothing is forwarded outside.
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"

	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
