//go:build tools

// Package k8stest records the commands this module builds, so that
// `go mod tidy` keeps k8s.io/kubernetes: the API server for the real API
// server test, and the rest of a single-node cluster (scripts/cluster.sh).
package k8stest

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	_ "k8s.io/kubectl/pkg/cmd"
)
