package k8s

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/load"
)

// The real API server the test starts: etcd and kube-apiserver built from
// the tools/k8stest module (`make k8s-bin`), kept in the user cache by
// version.
const (
	// apiServerVersion is the k8s.io/kubernetes release tools/k8stest builds.
	apiServerVersion = "v1.34.2"
	// envAPIServerBin names the folder holding etcd and kube-apiserver.
	envAPIServerBin = "SHOWDOWN_K8S_BIN"
	// envAPIServerTest set to 1 builds the binaries when they are missing
	// (one cold build takes many minutes, see docs/kubernetes.md).
	envAPIServerTest = "SHOWDOWN_K8S_TEST"
)

// apiServerLDFlags stamp the kube-apiserver's version, as the project's
// release builds do (the Makefile's k8s-bin uses the same).
var apiServerLDFlags = "-X k8s.io/component-base/version.gitVersion=" + apiServerVersion +
	" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=" + strings.Split(apiServerVersion, ".")[1]

// apiServerBinDir is where `make k8s-bin` puts the binaries.
func apiServerBinDir() string {
	if d := os.Getenv(envAPIServerBin); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "showdown", "k8stest", apiServerVersion)
}

// TestToolModuleVersion keeps apiServerVersion and the tool module's
// k8s.io/kubernetes requirement the same, so the cache folder names what
// it holds.
func TestToolModuleVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "tools", "k8stest", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(b)
	if m == nil || string(m[1]) != apiServerVersion {
		t.Fatalf("tools/k8stest/go.mod requires k8s.io/kubernetes %q, the test expects %s", m, apiServerVersion)
	}
	if !bytes.Contains(b, []byte("k8s.io/api => k8s.io/api v0"+strings.TrimPrefix(apiServerVersion, "v1"))) {
		t.Errorf("tools/k8stest/go.mod does not map the staging module k8s.io/api to v0%s", strings.TrimPrefix(apiServerVersion, "v1"))
	}
}

// apiServerBinaries returns the paths of etcd and kube-apiserver, building
// them when SHOWDOWN_K8S_TEST=1 asks for it, or skips the test.
func apiServerBinaries(t *testing.T) (etcd, apiserver string) {
	dir := apiServerBinDir()
	etcd, apiserver = filepath.Join(dir, "etcd"), filepath.Join(dir, "kube-apiserver")
	_, e1 := os.Stat(etcd)
	_, e2 := os.Stat(apiserver)
	if e1 == nil && e2 == nil {
		return etcd, apiserver
	}
	if os.Getenv(envAPIServerTest) != "1" {
		t.Skipf("no etcd and kube-apiserver %s in %s: run `make k8s-test` (builds them once from the Go module proxy, "+
			"many minutes on 2 cores) or set %s=1", apiServerVersion, dir, envAPIServerTest)
	}
	for _, b := range [][2]string{{etcd, "./etcd"}, {apiserver, "k8s.io/kubernetes/cmd/kube-apiserver"}} {
		t.Logf("building %s (once; cached in %s)", b[1], dir)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", apiServerLDFlags, "-o", b[0], b[1])
		cmd.Dir = filepath.Join("..", "..", "tools", "k8stest")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	return etcd, apiserver
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pki is the test cluster's certificates: a CA, the server's serving
// certificate for 127.0.0.1 and an admin client certificate (group
// system:masters), as PEM files in dir and as bytes for client-go.
type pki struct {
	caFile, certFile, keyFile, saKeyFile, saPubFile string
	ca, clientCert, clientKey                       []byte
}

func writePKI(t *testing.T, dir string) *pki {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keyPEM := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: b})
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "showdown-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	sign := func(serial int64, tmpl *x509.Certificate, k *ecdsa.PrivateKey) []byte {
		tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = big.NewInt(serial), now.Add(-time.Hour), now.Add(24*time.Hour)
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	srvKey, cliKey, saKey := newKey(), newKey(), newKey()
	srvCert := sign(2, &x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, srvKey)
	cliCert := sign(3, &x509.Certificate{Subject: pkix.Name{CommonName: "showdown-admin", Organization: []string{"system:masters"}},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, cliKey)
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{caFile: filepath.Join(dir, "ca.crt"), certFile: filepath.Join(dir, "apiserver.crt"), keyFile: filepath.Join(dir, "apiserver.key"),
		saKeyFile: filepath.Join(dir, "sa.key"), saPubFile: filepath.Join(dir, "sa.pub"),
		ca: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), clientCert: cliCert, clientKey: keyPEM(cliKey)}
	for path, b := range map[string][]byte{p.caFile: p.ca, p.certFile: srvCert, p.keyFile: keyPEM(srvKey),
		p.saKeyFile: keyPEM(saKey), p.saPubFile: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub})} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// startProcess starts a command whose output goes to a log file in dir,
// stopped (SIGTERM, then SIGKILL) when the test ends.
func startProcess(t *testing.T, dir, name string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	logPath := filepath.Join(dir, filepath.Base(name)+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); log.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd, logPath
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startAPIServer starts etcd and kube-apiserver on loopback and returns
// a client config for an administrator, once /readyz answers ok.
func startAPIServer(t *testing.T) *rest.Config {
	etcdBin, apiBin := apiServerBinaries(t)
	dir := t.TempDir()
	p := writePKI(t, dir)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	t0 := time.Now()
	_, etcdLog := startProcess(t, dir, etcdBin, "--data-dir", filepath.Join(dir, "etcd"),
		"--client-url", etcdURL, "--peer-url", fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	port := freePort(t)
	apiCmd, apiLog := startProcess(t, dir, apiBin,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir="+dir, "--tls-cert-file="+p.certFile, "--tls-private-key-file="+p.keyFile,
		"--client-ca-file="+p.caFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.saPubFile, "--service-account-signing-key-file="+p.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		// No controller manager makes the namespaces' default service
		// accounts, so the admission that needs them is off.
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--v=1",
	)
	cfg := &rest.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", port), QPS: 200, Burst: 400,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.ca, CertData: p.clientCert, KeyData: p.clientKey}}
	cert, err := tls.X509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.ca)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := hc.Get(cfg.Host + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Logf("etcd and kube-apiserver %s ready in %s", apiServerVersion, time.Since(t0).Round(100*time.Millisecond))
				return cfg
			}
			if time.Now().After(deadline) {
				t.Fatalf("kube-apiserver not ready after 3 min: %d %s\n%s", resp.StatusCode, body, tail(apiLog, 20))
			}
		}
		if apiCmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("kube-apiserver did not start (%v)\nkube-apiserver log:\n%s\netcd log:\n%s", err, tail(apiLog, 30), tail(etcdLog, 10))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestRealAPIServer starts etcd and kube-apiserver and checks, against
// them: every rendered object passes server-side strict validation, an
// unknown field is refused, and the k8s run controller creates its
// objects, drives a level whose pods the test runs in place of the
// cluster's controllers and kubelets (there are none), merges the shards
// and deletes its namespace, also on Ctrl-C.
func TestRealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	cfg := startAPIServer(t)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The version is what the build stamped (make k8s-bin sets it with
	// -ldflags; a plain go build says v0.0.0-master).
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion == "" {
		t.Fatalf("server version %v: %v", v, err)
	}
	t.Logf("server version %s", v.GitVersion)
	p, err := plan.ParsePlan("plan.yaml", []byte("name: real\nimplementations: [go-stdlib]\nworkloads: [bank]\nload: {model: open, levels: [400], duration: 1s, warmup: auto, warmup_max: 30s}\nreplicas: [2]\ngenerator: {pods: 2}\n"), catalog, plan.MachineOf(2))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("strict validation", func(t *testing.T) {
		m, err := Render(p, Options{Start: start, RunID: "dry"})
		if err != nil {
			t.Fatal(err)
		}
		strict := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, m.Objects()[0].(*corev1.Namespace), metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatal(err)
		}
		defer cs.CoreV1().Namespaces().Delete(context.Background(), m.Namespace, metav1.DeleteOptions{})
		n := 0
		for _, o := range m.Objects()[1:] {
			ns := o.GetNamespace()
			var err error
			switch o := o.(type) {
			case *corev1.Service:
				_, err = cs.CoreV1().Services(ns).Create(ctx, o, strict)
			case *appsv1.StatefulSet:
				_, err = cs.AppsV1().StatefulSets(ns).Create(ctx, o, strict)
			case *appsv1.Deployment:
				_, err = cs.AppsV1().Deployments(ns).Create(ctx, o, strict)
			case *batchv1.Job:
				_, err = cs.BatchV1().Jobs(ns).Create(ctx, o, strict)
			default:
				t.Fatalf("no client for %T in the test", o)
			}
			if err != nil {
				t.Errorf("%T %s: %v", o, o.GetName(), err)
			}
			n++
		}
		t.Logf("%d rendered objects accepted with dryRun=All&fieldValidation=Strict", n)
		// The same validation refuses a field the API does not have.
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"},"replicaz":3}`
		res := cs.CoreV1().RESTClient().Post().Namespace(m.Namespace).Resource("configmaps").
			Param("dryRun", "All").Param("fieldValidation", "Strict").Body([]byte(body)).SetHeader("Content-Type", "application/json").Do(ctx)
		if err := res.Error(); err == nil || !strings.Contains(err.Error(), `unknown field "replicaz"`) {
			t.Errorf("an unknown field was not refused: %v", err)
		}
	})

	shards, hits := shardResults(t)
	run := func(t *testing.T, runID string, status func(role, pod string) corev1.PodStatus, cancelAfter time.Duration) (*Manifests, string, error) {
		m, err := Render(p, Options{Start: start, RunID: runID})
		if err != nil {
			t.Fatal(err)
		}
		kctx, stopKubelet := context.WithCancel(ctx)
		defer stopKubelet()
		go (&kubelet{cs: cs, ns: m.Namespace, status: status, every: 50 * time.Millisecond}).run(kctx)
		var progress bytes.Buffer
		c := &Controller{Client: cs, Exec: &execer{shards: shards, done: func(int) bool { return true }}, Progress: &progress,
			Poll: 100 * time.Millisecond, Lead: time.Second, ReadyTimeout: time.Minute}
		runCtx := ctx
		if cancelAfter > 0 {
			var cancelRun context.CancelFunc
			runCtx, cancelRun = context.WithCancel(ctx)
			time.AfterFunc(cancelAfter, cancelRun)
		}
		dir := t.TempDir()
		rec, _, err := c.Run(runCtx, p, m, dir)
		stopKubelet()
		t.Logf("progress:\n%s", strings.TrimSpace(progress.String()))
		// With no controller manager the namespace controller never
		// empties a deleted namespace: it stays Terminating, its objects
		// in place. Its deletion having been asked for is what we check.
		ns, gerr := cs.CoreV1().Namespaces().Get(ctx, m.Namespace, metav1.GetOptions{})
		if gerr == nil && ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s not deleted after the run", m.Namespace)
		} else if gerr != nil && !apierrors.IsNotFound(gerr) {
			t.Error(gerr)
		}
		if err == nil {
			merged, rerr := load.ReadDir(filepath.Join(dir, rec.Services[0].Levels[0].Dir))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if merged.Summary.Total.Samples != hits || len(merged.Summary.Shards) != 2 {
				t.Errorf("merged %d samples from shards %v, the server saw %d", merged.Summary.Total.Samples, merged.Summary.Shards, hits)
			}
		}
		return m, progress.String(), err
	}

	t.Run("level", func(t *testing.T) {
		m, progress, err := run(t, "ok", func(string, string) corev1.PodStatus { return running() }, 0)
		if err != nil {
			t.Fatalf("%v\n%s", err, progress)
		}
		// What the controller created is really there (till the namespace
		// controller, absent here, would remove it).
		if _, err := cs.AppsV1().StatefulSets(m.Namespace).Get(ctx, "postgres", metav1.GetOptions{}); err != nil {
			t.Errorf("the database StatefulSet: %v", err)
		}
		jobs, err := cs.BatchV1().Jobs(m.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs.Items {
			if j.DeletionTimestamp == nil && len(j.Finalizers) == 0 {
				t.Errorf("job %s not deleted after its level", j.Name)
			}
		}
	})

	t.Run("pending and Ctrl-C", func(t *testing.T) {
		// No kubelet: the pods stay Pending; Ctrl-C deletes the namespace.
		_, progress, err := run(t, "int", func(string, string) corev1.PodStatus { return corev1.PodStatus{Phase: corev1.PodPending} }, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("run ended with %v, want context canceled\n%s", err, progress)
		}
	})
}
