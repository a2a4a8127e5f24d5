//go:build tools

// Package k8stest records the commands this module builds, so that
// `go mod tidy` keeps k8s.io/kubernetes.
package k8stest

import _ "k8s.io/kubernetes/cmd/kube-apiserver/app"
