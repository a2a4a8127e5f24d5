package k8s

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
)

// Connect returns a clientset and an Execer for the kubeconfig context
// (empty: the current one), as kubectl finds them.
func Connect(kubeContext string) (kubernetes.Interface, Execer, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	rc, err := cfg.ClientConfig()
	if err != nil {
		return nil, nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	raw, _ := cfg.RawConfig()
	name := kubeContext
	if name == "" {
		name = raw.CurrentContext
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, "", err
	}
	return cs, &SPDYExecer{Config: rc, Client: cs}, name, nil
}

// SPDYExecer runs commands in containers over the exec API.
type SPDYExecer struct {
	Config *rest.Config
	Client kubernetes.Interface
}

var _ Execer = (*SPDYExecer)(nil)

// Exec runs cmd in the container and copies its stdout to w; a non-zero
// exit is an error with an ExitStatus method.
func (e *SPDYExecer) Exec(ctx context.Context, ns, pod, container string, cmd []string, w io.Writer) error {
	req := e.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(e.Config, "POST", req.URL())
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: w, Stderr: &stderr})
	if err != nil && stderr.Len() > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return err
}
