package k8s

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/report"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// kubelet plays the part of the cluster's controllers and kubelets on a
// fake clientset: it makes the pods of every StatefulSet, Deployment and
// Job and gives them the status the test asks for.
type kubelet struct {
	cs kubernetes.Interface
	ns string
	// every is the time between two looks (2 ms when zero).
	every time.Duration
	// task gives the status of a one-pod task (verify, audit); nil:
	// it succeeds.
	task func(role string) corev1.PodStatus
	mu   sync.Mutex
	// tasks records each task pod's arguments by role.
	tasks map[string][]string
	// status gives a pod's status from its role (database, service,
	// generator) and name.
	status func(role, pod string) corev1.PodStatus
}

func (k *kubelet) run(ctx context.Context) {
	if k.every == 0 {
		k.every = 2 * time.Millisecond
	}
	for ctx.Err() == nil {
		k.sync(ctx)
		time.Sleep(k.every)
	}
}

func (k *kubelet) ensure(ctx context.Context, name, role string, labels, annotations map[string]string, spec corev1.PodSpec) {
	pods := k.cs.CoreV1().Pods(k.ns)
	p, err := pods.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: labels, Annotations: annotations}, Spec: spec}
		p.Spec.NodeName = "node-" + role
		if p, err = pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return
		}
	} else if err != nil {
		return
	}
	switch role {
	case "verify", "audit":
		k.mu.Lock()
		if k.tasks == nil {
			k.tasks = map[string][]string{}
		}
		k.tasks[role] = p.Spec.Containers[0].Args
		k.mu.Unlock()
		p.Status = corev1.PodStatus{Phase: corev1.PodSucceeded}
		if k.task != nil {
			p.Status = k.task(role)
		}
	default:
		p.Status = k.status(role, name)
	}
	p.Status.QOSClass = qosOf(p.Spec)
	if role == "service" {
		p.Status.PodIP = "10.1.0." + strconv.Itoa(len(name)%200+1)
	}
	// A status names the pod's own containers, as a real API server wants.
	for i := range p.Status.ContainerStatuses {
		if !hasContainer(p.Spec, p.Status.ContainerStatuses[i].Name) {
			p.Status.ContainerStatuses[i].Name = p.Spec.Containers[0].Name
		}
		if p.Status.ContainerStatuses[i].Image == "" {
			p.Status.ContainerStatuses[i].Image = p.Spec.Containers[0].Image
		}
	}
	pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

// qosOf is the class a kubelet gives a pod of spec: Guaranteed when every
// container's requests equal its limits for CPU and memory.
func qosOf(spec corev1.PodSpec) corev1.PodQOSClass {
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, ok := c.Resources.Limits[r]
			if q, rok := c.Resources.Requests[r]; !ok || (rok && q.Cmp(l) != 0) {
				return corev1.PodQOSBurstable
			}
		}
	}
	return corev1.PodQOSGuaranteed
}

func hasContainer(spec corev1.PodSpec, name string) bool {
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		if c.Name == name {
			return true
		}
	}
	return false
}

func (k *kubelet) sync(ctx context.Context) {
	if sss, err := k.cs.AppsV1().StatefulSets(k.ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, s := range sss.Items {
			k.ensure(ctx, s.Name+"-0", "database", s.Spec.Template.Labels, nil, s.Spec.Template.Spec)
		}
	}
	if ds, err := k.cs.AppsV1().Deployments(k.ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, d := range ds.Items {
			for i := 0; i < int(*d.Spec.Replicas); i++ {
				k.ensure(ctx, fmt.Sprintf("%s-%d", d.Name, i), "service", d.Spec.Template.Labels, nil, d.Spec.Template.Spec)
			}
		}
	}
	if js, err := k.cs.BatchV1().Jobs(k.ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, j := range js.Items {
			for i := 0; i < int(*j.Spec.Completions); i++ {
				role := j.Spec.Template.Labels[LabelComponent]
				k.ensure(ctx, fmt.Sprintf("%s-%d", j.Name, i), role, j.Spec.Template.Labels,
					map[string]string{batchv1.JobCompletionIndexAnnotation: strconv.Itoa(i)}, j.Spec.Template.Spec)
			}
		}
	}
}

// failed is a task pod whose container exited with code.
func failed(container string, code int32) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: container,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}}}}
}

// podStart is when every fake service container starts; it is Ready
// podStartup later.
var podStart = time.Date(2026, 11, 23, 7, 59, 0, 0, time.UTC)

const podStartup = 3 * time.Second

func running() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(podStart.Add(podStartup))}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "service", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(podStart)}}}}}
}

// Samplers' files: one row a second over the fake clock's first hour,
// 40% CPU and samplerRSS, except one row of far more RSS before the
// clock starts, which no level may count.
const samplerRSS = 50 << 20

func samplerCSV() []byte {
	var b bytes.Buffer
	w, _ := monitor.NewCSVWriter(&b)
	w.Write(monitor.Sample{Time: podStart, RSSBytes: 10 * samplerRSS, Processes: 1})
	for t := podStart.Add(time.Minute); t.Before(podStart.Add(time.Hour)); t = t.Add(time.Second) {
		w.Write(monitor.Sample{Time: t, Interval: time.Second, Processes: 1, CPUPercent: 40, RSSBytes: samplerRSS, Threads: 7, FDs: 9})
	}
	return b.Bytes()
}

func waiting(container, reason, msg string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: container, Image: "localhost/showdown/go-stdlib:latest",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}}
}

// exitStatus is a command's non-zero exit, as the exec API reports it.
type exitStatus int

func (e exitStatus) Error() string {
	return fmt.Sprintf("command terminated with exit code %d", int(e))
}
func (e exitStatus) ExitStatus() int { return int(e) }

// execer answers the controller's pack commands: a shard's real result
// folder once the test says it is done, a sampler's CSV.
type execer struct {
	mu     sync.Mutex
	shards map[int]string // shard number -> result folder
	done   func(shard int) bool
	calls  []string
}

func (e *execer) Exec(ctx context.Context, ns, pod, container string, cmd []string, w io.Writer) error {
	e.mu.Lock()
	e.calls = append(e.calls, pod+"/"+container+": "+strings.Join(cmd, " "))
	e.mu.Unlock()
	if strings.Join(cmd[:3], " ") != "showdown k8s pack" {
		return fmt.Errorf("unexpected command %v", cmd)
	}
	switch container {
	case "sampler":
		dir, err := os.MkdirTemp("", "samples")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		os.WriteFile(filepath.Join(dir, "samples.csv"), samplerCSV(), 0o644)
		return Pack(w, dir)
	case "warmup":
		// The warm-up pod's record, as showdown k8s warmup writes it.
		dir, err := os.MkdirTemp("", "warmup")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		os.WriteFile(filepath.Join(dir, results.WarmupFile), []byte(`{"auto": true, "steady": true, "seconds": 12.0, "requests": 4800, "metric": "p50_ms"}`), 0o644)
		return Pack(w, dir)
	case "attack":
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(cmd[3]), "shard-"))
		if err != nil {
			return err
		}
		if !e.done(n) {
			return exitStatus(ExitNotFinished)
		}
		return Pack(w, e.shards[n])
	}
	return fmt.Errorf("no container %s", container)
}

// shardResults runs a real two-shard attack against a local server and
// returns each shard's result folder and the server's count of requests.
func shardResults(t *testing.T) (map[int]string, int64) {
	t.Helper()
	var mu sync.Mutex
	var hits int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	out := map[int]string{}
	for i := 1; i <= 2; i++ {
		a := load.NewAttacker(load.WithShard(load.Shard{Index: i, Count: 2}))
		res, err := a.Attack(context.Background(), &load.Target{Method: "GET", URL: srv.URL}, load.OpenModel{Rate: 200, Duration: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "shard")
		if err := res.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		out[i] = dir
	}
	return out, hits
}

// clock advances one second each time it is read, so waits that would
// take minutes take milliseconds.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func TestControllerRun(t *testing.T) {
	shards, hits := shardResults(t)
	for _, tc := range []struct {
		name   string
		status func(role, pod string) corev1.PodStatus
		done   func(shard int) bool
		cancel bool // press Ctrl-C while the run waits
		task   func(role string) corev1.PodStatus
		want   []string // substrings of the error; none: success
	}{
		// Every pod starts, both shards finish: one merged level.
		{name: "ok", status: func(string, string) corev1.PodStatus { return running() }, done: func(int) bool { return true }},
		// A service image that cannot be pulled names the pod, the image and the fix.
		{name: "image pull", status: func(role, _ string) corev1.PodStatus {
			if role == "service" {
				return waiting("service", "ImagePullBackOff", `Back-off pulling image "localhost/showdown/go-stdlib:latest"`)
			}
			return running()
		}, done: func(int) bool { return true }, want: []string{"go-stdlib-x2-0", "ImagePullBackOff", "image localhost/showdown/go-stdlib:latest"}},
		// A service killed at its memory limit names the limit.
		{name: "oom", status: func(role, _ string) corev1.PodStatus {
			s := running()
			if role == "service" {
				s.Conditions[0].Status = corev1.ConditionFalse
				s.ContainerStatuses = []corev1.ContainerStatus{{Name: "service", RestartCount: 2,
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}
			}
			return s
		}, done: func(int) bool { return true }, want: []string{"container service: OOMKilled", "memory limit 1Gi", "fake logs"}},
		// A crashing database quotes its last log lines.
		{name: "crash loop", status: func(role, _ string) corev1.PodStatus {
			if role == "database" {
				return waiting("postgres", "CrashLoopBackOff", "back-off 40s restarting failed container")
			}
			return running()
		}, done: func(int) bool { return true }, want: []string{"postgres-0", "CrashLoopBackOff", "last log lines:\nfake logs"}},
		// A shard that never finishes fails the level by name.
		{name: "shard never finishes", status: func(string, string) corev1.PodStatus { return running() },
			done: func(n int) bool { return n != 2 }, want: []string{"shard(s) 2 of 2 did not finish"}},
		// The contract check inside the cluster fails: no level runs, the
		// error quotes the check's output.
		{name: "contract fails", status: func(string, string) corev1.PodStatus { return running() }, done: func(int) bool { return true },
			task: func(role string) corev1.PodStatus {
				if role == "verify" {
					return failed(role, 4)
				}
				return corev1.PodStatus{Phase: corev1.PodSucceeded}
			}, want: []string{"contract check of go-stdlib-x2 on bank", "exit code 4", "fake logs"}},
		// The audit finds a broken invariant: the level stays measured,
		// the record says what the database holds against it.
		{name: "audit finds", status: func(string, string) corev1.PodStatus { return running() }, done: func(int) bool { return true },
			task: func(role string) corev1.PodStatus {
				if role == "audit" {
					return failed(role, 4)
				}
				return corev1.PodStatus{Phase: corev1.PodSucceeded}
			}},
		// Ctrl-C while waiting for readiness: the namespace is deleted all the same.
		{name: "interrupted", status: func(string, string) corev1.PodStatus { return corev1.PodStatus{Phase: corev1.PodPending} },
			done: func(int) bool { return true }, cancel: true, want: []string{"context canceled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.ParsePlan("plan.yaml", []byte("name: fake\nimplementations: [go-stdlib]\nworkloads: [bank]\nload: {model: open, levels: [400], duration: 1s, warmup: auto, warmup_max: 30s}\nreplicas: [2]\ngenerator: {pods: 2}\n"), catalog, plan.MachineOf(2))
			if err != nil {
				t.Fatal(err)
			}
			m, err := Render(p, Options{Start: start, RunID: "t"})
			if err != nil {
				t.Fatal(err)
			}
			cs := fake.NewSimpleClientset()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			kctx, stopKubelet := context.WithCancel(ctx)
			defer stopKubelet()
			kl := &kubelet{cs: cs, ns: m.Namespace, status: tc.status, task: tc.task}
			go kl.run(kctx)
			ex := &execer{shards: shards, done: tc.done}
			var progress bytes.Buffer
			c := &Controller{Client: cs, Exec: ex, Progress: &progress, Poll: time.Millisecond, Now: clock(), ReadyTimeout: time.Hour,
				Images: map[string]Image{"go-stdlib": {Ref: "localhost/showdown/go-stdlib:latest", Bytes: 13_500_000, ArtifactBytes: 13_400_000}}}
			runCtx := ctx
			if tc.cancel {
				var cancelRun context.CancelFunc
				runCtx, cancelRun = context.WithCancel(ctx)
				time.AfterFunc(50*time.Millisecond, cancelRun)
			}
			dir := t.TempDir()
			rec, cl, err := c.Run(runCtx, p, m, dir)
			stopKubelet()
			if _, gerr := cs.CoreV1().Namespaces().Get(ctx, m.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(gerr) {
				t.Errorf("namespace %s still exists after the run (%v)", m.Namespace, gerr)
			}
			if len(tc.want) > 0 {
				if err == nil {
					t.Fatalf("run succeeded, want an error with %q\n%s", tc.want, progress.String())
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				var pe *PodError
				if errors.As(err, &pe) && pe.Hint() == "" {
					t.Errorf("%s: no hint", pe.Reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			kl.mu.Lock()
			verifyArgs, auditArgs := strings.Join(kl.tasks["verify"], " "), strings.Join(kl.tasks["audit"], " ")
			kl.mu.Unlock()
			// warmup: auto ran in its own pod with the lab's rule, before the level.
			if wu := rec.Services[0].Warmup; wu == nil || !wu.Steady || wu.Requests != 4800 || wu.Seconds != 12 {
				t.Errorf("warm-up record %+v, want the warm-up pod's", wu)
			}
			if !strings.Contains(progress.String(), "warming go-stdlib-x2 up on bank") || strings.Index(progress.String(), "warmed up") > strings.Index(progress.String(), "level 400") {
				t.Errorf("no warm-up before the level:\n%s", progress.String())
			}
			// Two replicas: the contract is checked on one pod by its address.
			if !regexp.MustCompile(`^verify --url http://10\.1\.0\.\d+:8080 --workload bank$`).MatchString(verifyArgs) || auditArgs != "k8s audit --workload bank" {
				t.Errorf("tasks ran %q and %q, want the contract check and the audit of bank", verifyArgs, auditArgs)
			}
			if vs := rec.Services[0].Levels[0].Violations; (tc.task != nil) != (len(vs) > 0) || (tc.task == nil) != (rec.Services[0].Status == results.OK) {
				t.Errorf("audit violations %+v, status %s", vs, rec.Services[0].Status)
			}
			level := filepath.Join(dir, rec.Services[0].Levels[0].Dir)
			merged, err := load.ReadDir(level)
			if err != nil {
				t.Fatal(err)
			}
			if merged.Summary.Total.Samples != hits || len(merged.Summary.Shards) != 2 {
				t.Errorf("merged %d samples from shards %v, the server saw %d", merged.Summary.Total.Samples, merged.Summary.Shards, hits)
			}
			// The level is written through results: the busiest pod's
			// resources join the engine's columns.
			if ser, err := load.ReadSeries(level); err != nil || ser.Col("service_cpu_percent") == nil {
				t.Errorf("level's timeseries.csv lacks the resource columns (%v)", err)
			}
			if rec.Services[0].Levels[0].Total.Samples != hits {
				t.Errorf("run.json level total %d, want %d", rec.Services[0].Levels[0].Total.Samples, hits)
			}
			if _, err := os.Stat(filepath.Join(level, "samples", "go-stdlib-x2-1", "samples.csv")); err != nil {
				t.Errorf("second service pod's samples not collected: %v", err)
			}
			// Image size, startup and RSS stand side by side in the record.
			sr, lr := rec.Services[0], rec.Services[0].Levels[0]
			if sr.ImageBytes != 13_500_000 || sr.ArtifactBytes != 13_400_000 || rec.Builds["go-stdlib"] == nil || rec.Builds["go-stdlib"].ImageBytes != 13_500_000 {
				t.Errorf("image sizes not recorded: service %d/%d, builds %+v", sr.ImageBytes, sr.ArtifactBytes, rec.Builds["go-stdlib"])
			}
			if sr.StartupSeconds != podStartup.Seconds() {
				t.Errorf("startup %v s, want %v (container start to Ready)", sr.StartupSeconds, podStartup.Seconds())
			}
			if lr.Service.RSSPeakBytes != samplerRSS || lr.Service.CPUMean != 40 || lr.Service.ThreadsMax != 7 {
				t.Errorf("level resources %+v, want the samplers' 40%% CPU and %d B RSS within the level", lr.Service, samplerRSS)
			}
			if len(cl.Pods) == 0 || cl.Steps[0].Shards != 2 || len(cl.Steps[0].Began) != 2 {
				t.Errorf("cluster record lacks placement or steps: %+v", cl)
			}
			for _, pod := range cl.Pods {
				if pod.QoS != string(corev1.PodQOSGuaranteed) {
					t.Errorf("pod %s (%s): QoS %q recorded, want Guaranteed", pod.Pod, pod.Role, pod.QoS)
				}
			}
			// The tasks, in order: the contract check, the warm-up, the audit.
			var kinds []string
			for _, tk := range cl.Tasks {
				kinds = append(kinds, tk.Kind)
				if (tk.Error != "") != (tc.task != nil && tk.Kind == "audit") || tk.End.Before(tk.Start) {
					t.Errorf("task %+v", tk)
				}
			}
			if strings.Join(kinds, ",") != "verify,warmup,audit" {
				t.Errorf("tasks recorded %v, want verify,warmup,audit", kinds)
			}
			back, err := results.ReadRun(dir)
			if err != nil || len(back.Services) != 1 {
				t.Fatalf("run.json read back: %v, %+v", err, back)
			}
			b, _ := os.ReadFile(filepath.Join(dir, results.RunFile))
			if !strings.Contains(string(b), `"kubernetes"`) || !strings.Contains(string(b), `"node": "node-service"`) {
				t.Errorf("run.json lacks the cluster and pod placement")
			}
			if _, err := report.WriteFiles(dir, dir); err != nil {
				t.Fatal(err)
			}
			html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
			for _, want := range []string{"<th>Image size</th>", "12.9 MiB", "localhost/showdown/go-stdlib:latest"} {
				if !strings.Contains(string(html), want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
		})
	}
}

func TestLateShards(t *testing.T) {
	at := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	// On time (within LateShard) and early: no warning.
	if w := lateShards(at, []time.Time{at, at.Add(LateShard), at.Add(-time.Second)}); len(w) != 0 {
		t.Errorf("warnings %q for shards on time", w)
	}
	// The second of two shards 3 s late: named, with its delay.
	w := lateShards(at, []time.Time{at, at.Add(3 * time.Second)})
	if len(w) != 1 || !strings.Contains(w[0], "shard 2/2 began measuring 3.0 s after") {
		t.Errorf("warnings %q, want shard 2/2 3.0 s late", w)
	}
}

// TestQuoteLogs: a failed check far above the tail is quoted before it.
func TestQuoteLogs(t *testing.T) {
	var b strings.Builder
	b.WriteString("PASS health (1ms)\nFAIL string/metrics counts requests (3ms): want 5, got 2\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "# metric line %d\n", i)
	}
	b.WriteString("87 passed, 1 failed\n")
	got := quoteLogs(b.String())
	if !strings.HasPrefix(got, "FAIL string/metrics counts requests (3ms): want 5, got 2\n...\n") || !strings.HasSuffix(got, "87 passed, 1 failed\n") ||
		strings.Count(got, "\n") != DefaultLogLines+2 {
		t.Errorf("quoted:\n%s", got)
	}
	if got := quoteLogs("one\ntwo\n"); got != "one\ntwo\n" {
		t.Errorf("short log quoted as %q", got)
	}
}
