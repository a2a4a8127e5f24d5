package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/k8s"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// envK8sFull set to 1 makes TestK8sCluster run the whole of
// plans/k8s-local.yaml and the Ctrl-C paths (make k8s-test); otherwise it
// runs the short check.
const envK8sFull = "SHOWDOWN_K8S_FULL"

// skuPlan runs the MariaDB workload on the image of 'showdown images
// build mariadb' (make k8s-test).
const skuPlan = `name: k8s-sku
description: one go-stdlib pod on sku, on MariaDB, one level of two shards
implementations: [go-stdlib]
workloads: [sku]
load: {model: open, levels: [100], duration: 5s, warmup: 2s}
replicas: [1]
generator: {pods: 2, cpu: 0.25, memory: 128MiB}
limits: {cpu: 0.25, memory: 256MiB}
`

// checkPlan is the short check: one service pod, one level of two shards.
const checkPlan = `name: k8s-check
description: one go-stdlib pod on string, one level of two shards
implementations: [go-stdlib]
workloads: [string]
load: {model: open, levels: [200], duration: 5s, warmup: 2s}
replicas: [1]
generator: {pods: 2, cpu: 0.25, memory: 128MiB}
limits: {cpu: 0.25, memory: 256MiB}
`

// TestK8sCluster runs showdown k8s run on a real single-node cluster of
// upstream parts (scripts/cluster.sh: etcd, kube-apiserver, controller
// manager, scheduler, kubelet, kube-proxy, CoreDNS, containerd and runc,
// the CNI bridge) with images built here by showdown images build, and
// checks the run from its results folder and the API: every pod Ready
// and Guaranteed, the contract Job before a workload's first level and
// the audit Job after its last, each level's shards begun at its instant
// and merged to their sums, every service pod's sampler series copied,
// the report made, the namespace gone; then that the cluster's down
// leaves nothing. With SHOWDOWN_K8S_FULL=1 the plan is
// plans/k8s-local.yaml (two stacks, string and bank, one and two
// replicas) and Ctrl-C is pressed in cluster.sh up and in k8s run.
// Without the built binaries or on a host that cannot run containers it
// skips, saying which (make test prints the same line).
func TestK8sCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster; skipped with -short")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "cluster.sh")
	if out, err := exec.Command("bash", script, "preflight").CombinedOutput(); err != nil {
		t.Skip(strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("bash", script, "left").CombinedOutput(); err != nil {
		t.Fatalf("a cluster is here already; the test brings up its own (scripts/cluster.sh down):\n%s", out)
	}
	full := os.Getenv(envK8sFull) == "1"
	ctx, cancel := context.WithTimeout(context.Background(), 35*time.Minute)
	defer cancel()
	tmp := t.TempDir()

	bin := filepath.Join(tmp, "showdown")
	if out, err := runIn(ctx, root, nil, "go", "build", "-o", bin, "./cmd/showdown"); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	names := []string{"go-stdlib", "showdown"}
	if full {
		names = append(names, "go-gin", "postgres", "mariadb")
	}
	imagesFile := filepath.Join(tmp, "images.json")
	if out, err := runIn(ctx, root, nil, bin, append([]string{"images", "build", "--record", imagesFile}, names...)...); err != nil {
		t.Fatalf("showdown images build: %v\n%s", err, out)
	}
	var built []struct{ Ref string }
	if b, err := os.ReadFile(imagesFile); err != nil || json.Unmarshal(b, &built) != nil || len(built) != len(names) {
		t.Fatalf("%s: %v, %d images, want %d", imagesFile, err, len(built), len(names))
	}

	if full {
		interruptUp(t, ctx, script)
	}
	out, err := runIn(ctx, root, nil, "bash", script, "up")
	t.Cleanup(func() {
		// Down, also after a failure above; nothing of the cluster may stay.
		out, err := runIn(context.Background(), root, nil, "bash", script, "down")
		if err != nil || strings.Contains(out, "left:") {
			t.Errorf("cluster.sh down: %v\n%s", err, out)
		}
		if out, err := runIn(context.Background(), root, nil, "bash", script, "left"); err != nil {
			t.Errorf("after down: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("cluster.sh up: %v\n%s", err, out)
	}
	kubeconfig := lastLine(out)
	refs := []string{"load"}
	for _, b := range built {
		refs = append(refs, b.Ref)
	}
	if out, err := runIn(ctx, root, nil, "bash", append([]string{script}, refs...)...); err != nil {
		t.Fatalf("cluster.sh load: %v\n%s", err, out)
	}
	env := []string{"KUBECONFIG=" + kubeconfig}
	kubectl := func(args ...string) (string, error) {
		return runIn(ctx, root, env, filepath.Join(k8sBinDir(), "kubectl"), args...)
	}

	planFile := filepath.Join(tmp, "k8s-check.yaml")
	if err := os.WriteFile(planFile, []byte(checkPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	if full {
		planFile = filepath.Join(root, "plans", "k8s-local.yaml")
	}
	resultsDir := filepath.Join(tmp, "results")
	if d := os.Getenv("SHOWDOWN_K8S_RESULTS"); d != "" {
		// make k8s-test keeps the run's results folder.
		resultsDir = d
	}
	args := []string{"k8s", "run", planFile, "--lead", "10s", "--results", resultsDir, "--images", imagesFile,
		"--postgres-image", "localhost/showdown/postgres:latest", "--database-cpu", "750m", "--database-memory", "512Mi"}
	wantServices := 1
	if full {
		wantServices = 8 // two stacks, two workloads, two replica counts
	}
	runPlan(t, ctx, root, env, bin, planFile, append([]string{"k8s", "run", planFile}, args[3:]...), resultsDir, wantServices, kubectl)

	if full {
		skuFile := filepath.Join(tmp, "k8s-sku.yaml")
		if err := os.WriteFile(skuFile, []byte(skuPlan), 0o644); err != nil {
			t.Fatal(err)
		}
		runPlan(t, ctx, root, env, bin, skuFile, append([]string{"k8s", "run", skuFile}, append(args[3:], "--mariadb-image", "localhost/showdown/mariadb:latest")...), resultsDir, 1, kubectl)
	}
	if full {
		interruptRun(t, ctx, root, env, bin, []string{"k8s", "run", filepath.Join(tmp, "k8s-check.yaml"), "--lead", "10s",
			"--results", filepath.Join(tmp, "interrupted"), "--images", imagesFile}, kubectl)
	}
}

// runPlan runs showdown k8s run with args and checks its results folder
// (checkClusterRun), its report and that its namespace went.
func runPlan(t *testing.T, ctx context.Context, root string, env []string, bin, planFile string, args []string, resultsDir string, wantServices int, kubectl func(...string) (string, error)) {
	t.Helper()
	t0 := time.Now()
	out, err := runIn(ctx, root, env, bin, args...)
	t.Logf("showdown k8s run %s: %s\n%s", filepath.Base(planFile), time.Since(t0).Round(time.Second), out)
	if err != nil {
		t.Fatalf("showdown k8s run: %v", err)
	}
	dirs, _ := filepath.Glob(filepath.Join(resultsDir, "*-k8s-"+strings.TrimSuffix(filepath.Base(planFile), ".yaml")))
	if len(dirs) == 0 {
		t.Fatalf("no results folder in %s", resultsDir)
	}
	dir := dirs[len(dirs)-1] // the newest
	checkClusterRun(t, dir, wantServices)
	if out, err := runIn(ctx, root, nil, bin, "report", dir); err != nil {
		t.Errorf("showdown report: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
	rec, _ := results.ReadRun(dir)
	// The usual report: a measured row of every service run.
	summary, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, sr := range rec.Services {
		if !bytes.Contains(summary, []byte("| "+sr.Implementation+" | ")) {
			t.Errorf("summary.md has no row of %s", sr.Implementation)
		}
	}
	if bytes.Contains(summary, []byte("nothing was measured")) || bytes.Contains(summary, []byte("| not measured |")) {
		t.Errorf("summary.md says something was not measured:\n%s", summary)
	}
	var cl k8s.Cluster
	json.Unmarshal(rec.Kubernetes, &cl)
	namespaceGone(t, kubectl, cl.Namespace)
}

// checkClusterRun checks a k8s run's results folder: the record of
// every pod, task and level against the plan's promises.
func checkClusterRun(t *testing.T, dir string, wantServices int) {
	t.Helper()
	rec, err := results.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cl k8s.Cluster
	if err := json.Unmarshal(rec.Kubernetes, &cl); err != nil {
		t.Fatalf("run.json's kubernetes: %v", err)
	}
	if len(rec.Warnings) > 0 {
		t.Errorf("run warnings: %q", rec.Warnings)
	}
	if len(rec.Services) != wantServices {
		t.Errorf("%d service runs, want %d", len(rec.Services), wantServices)
	}
	// Every pod the run saw was Guaranteed, as rendered; every service
	// pod is named in the record.
	servicePods := map[string][]string{} // deployment -> pods
	for _, p := range cl.Pods {
		if p.QoS != "Guaranteed" {
			t.Errorf("pod %s (%s): QoS %q, want Guaranteed", p.Pod, p.Role, p.QoS)
		}
		if p.Role == "service" {
			d := p.Pod[:strings.LastIndex(p.Pod[:strings.LastIndex(p.Pod, "-")], "-")]
			servicePods[d] = append(servicePods[d], p.Pod)
		}
	}
	for _, tk := range cl.Tasks {
		if tk.Error != "" {
			t.Errorf("task %s: %s", tk.Job, tk.Error)
		}
	}
	stepsByDir := map[string]k8s.StepRecord{}
	for _, s := range cl.Steps {
		stepsByDir[s.Dir] = s
	}
	for _, sr := range rec.Services {
		if sr.Status != results.OK {
			t.Errorf("%s on %s: %s %s", sr.Service, sr.Workload, sr.Status, sr.Reason)
			continue
		}
		// One replica count: the implementation's name; several: name@xN.
		impl, n := sr.Implementation, 1
		if i := strings.LastIndex(impl, "@x"); i >= 0 {
			n, _ = strconv.Atoi(impl[i+2:])
			impl = impl[:i]
		}
		deployment := fmt.Sprintf("%s-x%d", impl, n)
		if len(servicePods[deployment]) != n {
			t.Errorf("%s: service pods %v, want %d", deployment, servicePods[deployment], n)
		}
		var first, last time.Time
		for _, lr := range sr.Levels {
			st, ok := stepsByDir[filepath.Join(dir, lr.Dir)]
			if !ok {
				t.Errorf("%s level %d: no step record", deployment, lr.Level)
				continue
			}
			if first.IsZero() {
				first = st.Start
			}
			last = st.Start
			checkLevel(t, filepath.Join(dir, lr.Dir), st, servicePods[deployment])
			for _, w := range lr.Warnings {
				if strings.Contains(w, "began measuring") {
					t.Errorf("%s level %d: %s", deployment, lr.Level, w)
				}
			}
		}
		// The contract Job ended before the first level's instant; the
		// audit (bank) began after the last's.
		verify, audit := findTask(cl.Tasks, "verify", deployment, sr.Workload), findTask(cl.Tasks, "audit", deployment, sr.Workload)
		if verify == nil || verify.End.After(first) {
			t.Errorf("%s on %s: contract Job %+v, want one ended before %s", deployment, sr.Workload, verify, first)
		}
		if sr.Workload == "bank" && (audit == nil || audit.Start.Before(last)) {
			t.Errorf("%s on bank: audit Job %+v, want one begun after %s", deployment, audit, last)
		}
	}
}

// checkLevel checks one merged level against its shards and samplers.
func checkLevel(t *testing.T, dir string, st k8s.StepRecord, pods []string) {
	t.Helper()
	merged, err := load.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Began) != st.Shards || st.Shards != 2 {
		t.Errorf("%s: %d shards, %d began; want 2", dir, st.Shards, len(st.Began))
	}
	var samples, errs, hist int64
	for i := 1; i <= st.Shards; i++ {
		s, err := load.ReadDir(filepath.Join(dir, "shards", fmt.Sprintf("shard-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		samples += s.Summary.Total.Samples
		errs += s.Summary.Total.Errors
		hist += s.Latency("").TotalCount()
	}
	if merged.Summary.Total.Samples != samples || merged.Summary.Total.Errors != errs || merged.Latency("").TotalCount() != hist || samples == 0 {
		t.Errorf("%s: merged %d requests, %d errors, %d in the histogram; the shards' sums %d, %d, %d",
			dir, merged.Summary.Total.Samples, merged.Summary.Total.Errors, merged.Latency("").TotalCount(), samples, errs, hist)
	}
	if errs > 0 {
		t.Errorf("%s: %d errors", dir, errs)
	}
	for _, pod := range pods {
		b, err := os.ReadFile(filepath.Join(dir, "samples", pod, "samples.csv"))
		if err != nil || bytes.Count(b, []byte("\n")) < 3 {
			t.Errorf("%s: sampler series of %s: %v, %d lines", dir, pod, err, bytes.Count(b, []byte("\n")))
		}
	}
	if ser, err := load.ReadSeries(dir); err != nil || ser.Col("service_cpu_percent") == nil {
		t.Errorf("%s: the per-second series lacks the service's columns (%v)", dir, err)
	}
}

// findTask is the task of kind for deployment on workload.
func findTask(tasks []k8s.TaskRecord, kind, deployment, workload string) *k8s.TaskRecord {
	for i := range tasks {
		if tasks[i].Kind == kind && strings.HasPrefix(tasks[i].Job, kind+"-"+deployment+"-"+workload) {
			return &tasks[i]
		}
	}
	return nil
}

// namespaceGone waits (at most two minutes) for the namespace's deletion
// to finish.
func namespaceGone(t *testing.T, kubectl func(...string) (string, error), ns string) {
	t.Helper()
	if ns == "" {
		t.Error("no namespace recorded")
		return
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Second) {
		out, err := kubectl("get", "namespace", ns, "-o", "name")
		if err != nil && strings.Contains(out, "NotFound") {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("namespace %s still there two minutes after the run: %s %v", ns, out, err)
			return
		}
	}
}

// interruptUp presses Ctrl-C in cluster.sh up once its API server
// started: it must take down what it started.
func interruptUp(t *testing.T, ctx context.Context, script string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", script, "up")
	out := &watch{want: "started kube-apiserver", seen: make(chan struct{})}
	if err := interrupt(ctx, cmd, out); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || !strings.Contains(out.String(), "interrupted") {
		t.Errorf("cluster.sh up after Ctrl-C: %v\n%s", err, out)
	}
	if lo, err := exec.Command("bash", script, "left").CombinedOutput(); err != nil {
		t.Fatalf("after Ctrl-C in cluster.sh up: %s", lo)
	}
}

// interruptRun presses Ctrl-C in k8s run once its first level's shards
// were created: it exits 130 and the namespace goes.
func interruptRun(t *testing.T, ctx context.Context, root string, env []string, bin string, args []string, kubectl func(...string) (string, error)) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
	out := &watch{want: "start at", seen: make(chan struct{})}
	if err := interrupt(ctx, cmd, out); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("k8s run after Ctrl-C: %v, want exit %d\n%s", err, exitInterrupted, out)
	}
	text := out.String()
	i := strings.Index(text, "deleted namespace ")
	if i < 0 {
		t.Errorf("k8s run after Ctrl-C did not delete its namespace:\n%s", text)
		return
	}
	namespaceGone(t, kubectl, strings.Fields(text[i+len("deleted namespace "):])[0])
}

// interrupt starts cmd in a process group of its own with its output in
// w, and sends the group SIGINT, as a terminal's Ctrl-C does, once w has
// seen its line.
func interrupt(ctx context.Context, cmd *exec.Cmd, w *watch) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return err
	}
	select {
	case <-w.seen:
	case <-ctx.Done():
	case <-time.After(10 * time.Minute):
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}

// watch keeps what is written to it and closes seen once it holds want.
type watch struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
	done bool
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if !w.done && strings.Contains(w.b.String(), w.want) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}

func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// runIn runs name in dir with env added, returning stdout and stderr.
func runIn(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// k8sBinDir is where make k8s-cluster-bin puts the cluster's binaries.
func k8sBinDir() string {
	if d := os.Getenv("SHOWDOWN_K8S_BIN"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "showdown", "k8stest", "v1.34.2")
}
