package k8s

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
	"github.com/showdownlab/showdown/workloads"
)

// Defaults of the controller.
const (
	// DefaultPoll is how often the controller looks at its pods.
	DefaultPoll = time.Second
	// DefaultReadyTimeout bounds the wait for a workload to become ready
	// (image pulls included).
	DefaultReadyTimeout = 10 * time.Minute
	// DefaultGrace is how long after a level's planned end a shard may
	// still take before it counts as never finishing.
	DefaultGrace = 2 * time.Minute
	// LateShard is how long after its planned start a shard may begin
	// measuring before the level carries a warning: the shards of a level
	// are meant to start together.
	LateShard = time.Second
	// DefaultLogLines is how many of a failed container's last log lines
	// an error quotes.
	DefaultLogLines = 20
)

// Execer runs a command in a container and streams its stdout to w: the
// exec API, as kubectl exec and kubectl cp use it.
type Execer interface {
	Exec(ctx context.Context, namespace, pod, container string, cmd []string, stdout io.Writer) error
}

// Controller runs rendered manifests on a cluster.
type Controller struct {
	Client kubernetes.Interface
	Exec   Execer
	// Progress receives one line per event; nil discards them.
	Progress io.Writer
	// Keep leaves the namespace in place at the end.
	Keep bool
	// Poll, ReadyTimeout, Grace and Lead default to DefaultPoll,
	// DefaultReadyTimeout, DefaultGrace and DefaultLead.
	Poll, ReadyTimeout, Grace, Lead time.Duration
	// Now is the clock (time.Now by default).
	Now func() time.Time
	// SkipChecks leaves out the contract check before a workload's first
	// level and the database audit after its last.
	SkipChecks bool
	// Images are the images the run uses by name (go-stdlib, showdown),
	// as 'showdown images build' recorded them: their sizes go into
	// run.json and the report beside startup and RSS.
	Images map[string]Image
	// Command and Context go into run.json: the command that reproduces
	// the run and the kubeconfig context it ran in.
	Command, Context string

	tasks []TaskRecord // the run's tasks so far
}

// Image is one built image: its reference and sizes.
type Image struct {
	Ref           string `json:"ref"`
	Bytes         int64  `json:"image_bytes"`
	ArtifactBytes int64  `json:"artifact_bytes"`
}

// Cluster is what run.json records about the cluster.
type Cluster struct {
	Context   string       `json:"context,omitempty"`
	Server    string       `json:"server_version,omitempty"`
	Namespace string       `json:"namespace"`
	Nodes     []Node       `json:"nodes"`
	Pods      []Placement  `json:"pods"`
	Sizing    Sizing       `json:"generator_sizing"`
	Steps     []StepRecord `json:"steps"`
	// Tasks are the one-pod Jobs run beside the levels (the contract
	// check, the warm-up, the audit), in order.
	Tasks []TaskRecord `json:"tasks,omitempty"`
}

// TaskRecord is one in-cluster task as run.
type TaskRecord struct {
	Job   string    `json:"job"`
	Kind  string    `json:"kind"` // verify, warmup, audit
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Error string    `json:"error,omitempty"`
}

// Node is one node of the cluster.
type Node struct {
	Name         string `json:"name"`
	InstanceType string `json:"instance_type,omitempty"`
	Zone         string `json:"zone,omitempty"`
	CPU          string `json:"cpu"`
	Memory       string `json:"memory"`
}

// Placement is where one pod ran.
type Placement struct {
	Pod  string `json:"pod"`
	Role string `json:"role"`
	Node string `json:"node"`
	// QoS is the class Kubernetes gave the pod (Guaranteed as rendered).
	QoS string `json:"qos_class,omitempty"`
}

// StepRecord is one level as run.
type StepRecord struct {
	Job    string    `json:"job"`
	Start  time.Time `json:"start"`
	Dir    string    `json:"dir"`
	Shards int       `json:"shards"`
	// Began is when each shard's measurement began (its result's start),
	// by shard: the instant plus the warm-up unless its pod started late.
	Began []time.Time `json:"shards_began,omitempty"`
	Error string      `json:"error,omitempty"`
}

// PodError is a pod that cannot do its work, with the reason Kubernetes
// gives and the container's last log lines.
type PodError struct {
	Namespace, Pod, Container string
	Reason                    string // ImagePullBackOff, OOMKilled, Unschedulable, ...
	Message                   string
	Logs                      string
}

func (e *PodError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s/%s", e.Namespace, e.Pod)
	if e.Container != "" {
		fmt.Fprintf(&b, ", container %s", e.Container)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Logs != "" {
		fmt.Fprintf(&b, "\nlast log lines:\n%s", strings.TrimRight(e.Logs, "\n"))
	}
	return b.String()
}

// Hint says what usually fixes the reason.
func (e *PodError) Hint() string {
	switch e.Reason {
	case "ImagePullBackOff", "ErrImagePull", "InvalidImageName":
		return "build and push the images (showdown images build --push REGISTRY) and pass the same --registry"
	case "OOMKilled":
		return "raise limits.memory (services) or generator.memory (shards)"
	case "Unschedulable":
		return "the cluster lacks the CPU or memory the pods request: add nodes or lower limits / generator.cpu"
	case "CrashLoopBackOff", "Error", "Failed":
		return "the log lines above say why the container exits"
	}
	return ""
}

func (c *Controller) defaults() {
	if c.Poll == 0 {
		c.Poll = DefaultPoll
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.Lead == 0 {
		c.Lead = DefaultLead
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

func (c *Controller) say(format string, args ...any) {
	fmt.Fprintf(c.Progress, format+"\n", args...)
}

// Run applies m, runs its steps in order and writes the results folder
// dir through package results, as the local runner does: each level's
// merged result under runs/ (with the busiest service pod's resource
// columns), every shard's and sampler's files beside it, and run.json
// after each level and at the end. Unless Keep, it deletes the namespace
// at the end, also when ctx is cancelled (Ctrl-C).
func (c *Controller) Run(ctx context.Context, p *plan.Plan, m *Manifests, dir string) (*results.Run, *Cluster, error) {
	c.defaults()
	c.tasks = nil
	rec := &results.Run{Version: 1, Command: c.Command, Plan: p, Start: c.Now().UTC(), Builds: map[string]*results.Build{}}
	cl := &Cluster{Context: c.Context, Namespace: m.Namespace, Sizing: m.Sizing}
	if v, err := c.Client.Discovery().ServerVersion(); err == nil {
		cl.Server = v.GitVersion
	}
	if nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			cpu, mem := n.Status.Capacity[corev1.ResourceCPU], n.Status.Capacity[corev1.ResourceMemory]
			cl.Nodes = append(cl.Nodes, Node{Name: n.Name, InstanceType: n.Labels["node.kubernetes.io/instance-type"],
				Zone: n.Labels["topology.kubernetes.io/zone"], CPU: cpu.String(), Memory: mem.String()})
		}
	}
	if !c.Keep {
		defer func() {
			// A fresh context: the run's may be cancelled (Ctrl-C), and
			// cleaning up is the point then.
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := c.Client.CoreV1().Namespaces().Delete(dctx, m.Namespace, metav1.DeleteOptions{})
			switch {
			case err == nil:
				c.say("deleted namespace %s", m.Namespace)
			case !apierrors.IsNotFound(err):
				c.say("could not delete namespace %s: %v (delete it with kubectl delete namespace %s)", m.Namespace, err, m.Namespace)
			}
		}()
	}
	err := c.run(ctx, p, m, dir, rec, cl)
	rec.End = c.Now().UTC()
	if ctx.Err() != nil {
		rec.Interrupted = true
	}
	if err != nil {
		rec.Warnings = append(rec.Warnings, err.Error())
	}
	if werr := c.writeRun(dir, rec, cl); werr != nil {
		c.say("writing %s: %v", results.RunFile, werr)
		err = errors.Join(err, werr)
	}
	return rec, cl, err
}

func (c *Controller) run(ctx context.Context, p *plan.Plan, m *Manifests, dir string, rec *results.Run, cl *Cluster) error {
	for _, o := range m.Base {
		if err := c.create(ctx, o); err != nil {
			return err
		}
	}
	for _, o := range m.Base {
		if ss, ok := o.(*appsv1.StatefulSet); ok {
			c.say("waiting for database %s", ss.Name)
			if err := c.waitReady(ctx, m.Namespace, ss.Name, ss.Spec.Selector.MatchLabels, 1); err != nil {
				return err
			}
		}
	}
	// Deployments live from their first step to their last; a workload's
	// contract is checked before its first level on a deployment and its
	// database audited after its last.
	last := map[*Deployment]int{}
	type run struct {
		d        *Deployment
		workload string
		trial    int
	}
	firstOf, lastOf := map[run]int{}, map[run]int{}
	firstStep := map[*Deployment]int{}
	for i, st := range m.Steps {
		last[st.Deployment] = i
		if _, ok := firstStep[st.Deployment]; !ok {
			firstStep[st.Deployment] = i
		}
		r := run{st.Deployment, st.Workload, st.Trial}
		if _, ok := firstOf[r]; !ok {
			firstOf[r] = i
		}
		lastOf[r] = i
	}
	created := map[*Deployment]bool{}
	startup := map[*Deployment]float64{}
	runs := map[string]*results.ServiceRun{}
	for i, st := range m.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := st.Deployment
		if !created[d] {
			if err := c.create(ctx, d.Service); err != nil {
				return err
			}
			if err := c.create(ctx, d.Deployment); err != nil {
				return err
			}
			created[d] = true
			c.say("waiting for %s: %d pod(s)", d.Deployment.Name, d.Replicas)
			t0 := c.Now()
			if err := c.waitReady(ctx, m.Namespace, d.Deployment.Name, d.Deployment.Spec.Selector.MatchLabels, d.Replicas); err != nil {
				return err
			}
			c.say("%s ready in %s", d.Deployment.Name, c.Now().Sub(t0).Round(time.Second))
			startup[d] = c.startup(ctx, m.Namespace, d.Deployment.Spec.Selector.MatchLabels)
		}
		key := st.Implementation + "|" + strconv.Itoa(st.Replicas) + "|" + st.Workload + "|" + strconv.Itoa(st.Trial)
		sr := runs[key]
		if sr == nil {
			sr = c.serviceRun(p, st, len(m.Deployments) > len(p.Implementations))
			sr.StartupSeconds = startup[d]
			if img, ok := c.Images[sr.Service]; ok {
				sr.ImageBytes, sr.ArtifactBytes = img.Bytes, img.ArtifactBytes
				rec.Builds[sr.Service] = &results.Build{Cached: true, ArtifactBytes: img.ArtifactBytes, Image: img.Ref, ImageBytes: img.Bytes}
			}
			runs[key] = sr
			rec.Services = append(rec.Services, sr)
		}
		r := run{d, st.Workload, st.Trial}
		if firstOf[r] == i && !c.SkipChecks {
			if err := c.verify(ctx, st); err != nil {
				sr.Status, sr.Reason = "failed", err.Error()
				return err
			}
		}
		if firstOf[r] == i {
			// A start's first workload may warm up longest (package
			// warmup): here a deployment's first step is its start.
			wu, err := c.warmUp(ctx, p, st, firstStep[d] == i, filepath.Join(dir, sr.Dir))
			if err != nil {
				sr.Status, sr.Reason = "failed", err.Error()
				return err
			}
			sr.Warmup = wu
		}
		lr := &results.LevelRun{Level: st.Level, Dir: filepath.Join(sr.Dir, "level-"+strconv.Itoa(st.Level)), Status: results.OK}
		sr.Levels = append(sr.Levels, lr)
		res, srec, err := c.step(ctx, st, filepath.Join(dir, lr.Dir))
		cl.Steps = append(cl.Steps, srec)
		if err != nil {
			lr.Status, lr.Reason = "failed", err.Error()
			sr.Status, sr.Reason = "failed", err.Error()
			return err
		}
		lr.Total, lr.TargetRate, lr.AchievedRate = res.Summary.Total, res.Summary.TargetRate, res.Summary.AchievedRate
		lr.Late, lr.Dropped = res.Summary.Late, res.Summary.Dropped
		lr.GeneratorCPUs = m.Sizing.Pods
		lr.Warnings = res.Summary.Warnings
		var busiest []results.ResourceSample
		lr.Service, busiest = resources(c.podSamples(filepath.Join(dir, lr.Dir, "samples")), srec.Start.Add(st.Warmup), res.Summary.DurationSeconds)
		if err := results.WriteLevel(filepath.Join(dir, lr.Dir), res, results.Samples{Service: busiest}); err != nil {
			lr.Status, lr.Reason = "failed", err.Error()
			sr.Status, sr.Reason = "failed", err.Error()
			return err
		}
		c.placement(ctx, m.Namespace, cl)
		if lastOf[r] == i && !c.SkipChecks && workloads.Database(st.Workload) != workloads.NoDatabase {
			if err := c.audit(ctx, st); err != nil {
				// The levels were measured; the record says what the
				// database holds against them.
				lr.Violations = append(lr.Violations, results.Violation{Check: "audit", Detail: err.Error()})
				sr.Status, sr.Reason = "failed", err.Error()
				rec.Warnings = append(rec.Warnings, err.Error())
				if ctx.Err() != nil {
					return err
				}
			}
		}
		if last[d] == i {
			c.deleteDeployment(ctx, d)
		}
		if err := c.writeRun(dir, rec, cl); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) serviceRun(p *plan.Plan, st *Step, byReplicas bool) *results.ServiceRun {
	id := st.Implementation
	if byReplicas {
		id = plan.ReplicaID(id, st.Replicas)
	}
	svc, variant, _ := strings.Cut(st.Implementation, "+")
	return &results.ServiceRun{Implementation: id, Service: svc, Variant: variant, Workload: st.Workload, Trial: st.Trial, Status: results.OK,
		Dir: filepath.Join("runs", st.Workload, dnsLabel(id, 63), "trial-"+strconv.Itoa(st.Trial))}
}

// startup is the longest time a service pod took from its container's
// start to its Ready condition, in seconds: the local runner's startup
// time, to within the readiness probe's period (1 s). 0 when unknown.
func (c *Controller) startup(ctx context.Context, ns string, labels map[string]string) float64 {
	pods, err := c.pods(ctx, ns, labels)
	if err != nil {
		return 0
	}
	var worst time.Duration
	for _, p := range pods {
		var started, ready time.Time
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "service" && cs.State.Running != nil {
				started = cs.State.Running.StartedAt.Time
			}
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready = cond.LastTransitionTime.Time
			}
		}
		if !started.IsZero() && ready.After(started) {
			worst = max(worst, ready.Sub(started))
		}
	}
	return worst.Seconds()
}

// podSamples reads the samplers' files of a level (dir/POD/samples.csv),
// by pod.
func (c *Controller) podSamples(dir string) map[string][]monitor.Sample {
	out := map[string][]monitor.Sample{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, e.Name(), "samples.csv"))
		if err != nil {
			continue
		}
		ss, err := monitor.ReadCSV(f)
		f.Close()
		if err != nil {
			c.say("  samples of %s: %v", e.Name(), err)
		}
		out[e.Name()] = ss
	}
	return out
}

// resources sums up the service pods' samples over a level's measured
// seconds: CPU and RSS of the busiest pod's process tree, as a local run
// reports its one service. It also returns the samples of the pod with
// the highest mean CPU, which become the level's resource columns.
func resources(pods map[string][]monitor.Sample, from time.Time, seconds float64) (results.Resources, []results.ResourceSample) {
	var out results.Resources
	var busiest []results.ResourceSample
	busiestCPU := -1.0
	to := from.Add(time.Duration(seconds * float64(time.Second)))
	names := make([]string, 0, len(pods))
	for name := range pods {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var in []results.ResourceSample
		for _, s := range pods[name] {
			if !s.Time.Before(from) && !s.Time.After(to.Add(time.Second)) {
				in = append(in, results.ResourceSample(s))
			}
		}
		r := results.SummarizeResources(in)
		if r.CPUMean > busiestCPU {
			busiest, busiestCPU = in, r.CPUMean
		}
		out.CPUMean, out.CPUMax = max(out.CPUMean, r.CPUMean), max(out.CPUMax, r.CPUMax)
		out.RSSPeakBytes, out.ThreadsMax, out.FDsMax = max(out.RSSPeakBytes, r.RSSPeakBytes), max(out.ThreadsMax, r.ThreadsMax), max(out.FDsMax, r.FDsMax)
		out.CtxSwitchesPS = max(out.CtxSwitchesPS, r.CtxSwitchesPS)
	}
	return out, busiest
}

// create creates o in the cluster.
func (c *Controller) create(ctx context.Context, o Object) error {
	var err error
	ns := o.GetNamespace()
	switch o := o.(type) {
	case *corev1.Namespace:
		_, err = c.Client.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = c.Client.CoreV1().Services(ns).Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.StatefulSet:
		_, err = c.Client.AppsV1().StatefulSets(ns).Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.Deployment:
		_, err = c.Client.AppsV1().Deployments(ns).Create(ctx, o, metav1.CreateOptions{})
	case *batchv1.Job:
		_, err = c.Client.BatchV1().Jobs(ns).Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("no client for %T", o)
	}
	if err != nil {
		return fmt.Errorf("creating %s %s/%s: %w", o.GetObjectKind().GroupVersionKind().Kind, ns, o.GetName(), err)
	}
	return nil
}

func (c *Controller) deleteDeployment(ctx context.Context, d *Deployment) {
	ns := d.Deployment.Namespace
	bg := metav1.DeletePropagationBackground
	if err := c.Client.AppsV1().Deployments(ns).Delete(ctx, d.Deployment.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		c.say("could not delete deployment %s: %v", d.Deployment.Name, err)
	}
	c.Client.CoreV1().Services(ns).Delete(ctx, d.Service.Name, metav1.DeleteOptions{})
}

// pods lists the pods matching labels.
func (c *Controller) pods(ctx context.Context, ns string, labels map[string]string) ([]corev1.Pod, error) {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sel := make([]string, len(keys))
	for i, k := range keys {
		sel[i] = k + "=" + labels[k]
	}
	list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: strings.Join(sel, ",")})
	if err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// waitReady waits until n pods matching labels are ready, failing at once
// on a pod that cannot become ready.
func (c *Controller) waitReady(ctx context.Context, ns, what string, labels map[string]string, n int) error {
	deadline := c.Now().Add(c.ReadyTimeout)
	lastReady := -1
	for {
		pods, err := c.pods(ctx, ns, labels)
		if err != nil {
			return err
		}
		ready := 0
		for i := range pods {
			if err := c.diagnose(ctx, &pods[i]); err != nil {
				return err
			}
			if podReady(&pods[i]) {
				ready++
			}
		}
		if ready != lastReady {
			c.say("  %s: %d/%d ready", what, ready, n)
			lastReady = ready
		}
		if ready >= n {
			return nil
		}
		if c.Now().After(deadline) {
			return fmt.Errorf("%s: %d of %d pods ready after %s (hint: kubectl -n %s describe pods -l %s)", what, ready, n, c.ReadyTimeout, ns, LabelName+"="+labels[LabelName])
		}
		if err := c.sleep(ctx); err != nil {
			return err
		}
	}
}

func (c *Controller) sleep(ctx context.Context) error {
	t := time.NewTimer(c.Poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// diagnose returns a PodError when p cannot do its work: an image that
// cannot be pulled, no node to run on, a container killed for memory or
// crashing in a loop, or a failed pod.
func (c *Controller) diagnose(ctx context.Context, p *corev1.Pod) error {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
			return &PodError{Namespace: p.Namespace, Pod: p.Name, Reason: "Unschedulable", Message: cond.Message}
		}
	}
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if t := cs.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			return c.podError(ctx, p, cs.Name, "OOMKilled", fmt.Sprintf("killed at its memory limit %s", limitOf(p, cs.Name)), false)
		}
		if t := cs.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
			return c.podError(ctx, p, cs.Name, "OOMKilled", fmt.Sprintf("killed at its memory limit %s (restarted %d times)", limitOf(p, cs.Name), cs.RestartCount), true)
		}
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ImagePullBackOff", "ErrImagePull", "InvalidImageName":
				return &PodError{Namespace: p.Namespace, Pod: p.Name, Container: cs.Name, Reason: w.Reason, Message: fmt.Sprintf("image %s: %s", cs.Image, w.Message)}
			case "CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return c.podError(ctx, p, cs.Name, w.Reason, w.Message, w.Reason == "CrashLoopBackOff")
			}
		}
	}
	if p.Status.Phase == corev1.PodFailed {
		name, msg := "", p.Status.Message
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				name, msg = cs.Name, fmt.Sprintf("exited with code %d (%s) %s", t.ExitCode, t.Reason, t.Message)
			}
		}
		return c.podError(ctx, p, name, "Failed", strings.TrimSpace(msg), false)
	}
	return nil
}

func limitOf(p *corev1.Pod, container string) string {
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == container {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				return q.String()
			}
		}
	}
	return "(none)"
}

func (c *Controller) podError(ctx context.Context, p *corev1.Pod, container, reason, msg string, previous bool) *PodError {
	e := &PodError{Namespace: p.Namespace, Pod: p.Name, Container: container, Reason: reason, Message: msg}
	lines, limit := int64(logScanLines), int64(1<<20)
	req := c.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: container, TailLines: &lines, LimitBytes: &limit, Previous: previous})
	if b, err := req.DoRaw(ctx); err == nil {
		e.Logs = quoteLogs(string(b))
	}
	return e
}

// logScanLines is how many of a failed container's last lines are read
// for its FAIL lines.
const logScanLines = 2000

// quoteLogs is what an error quotes of a container's log: its last
// DefaultLogLines lines, after the lines that say FAIL (a contract
// check's failed checks, which a long output pushes out of the tail).
func quoteLogs(log string) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	tail := lines[max(0, len(lines)-DefaultLogLines):]
	var fails []string
	for _, l := range lines[:len(lines)-len(tail)] {
		if strings.HasPrefix(strings.TrimSpace(l), "FAIL ") && len(fails) < DefaultLogLines {
			fails = append(fails, l)
		}
	}
	if len(fails) == 0 {
		return strings.Join(tail, "\n") + "\n"
	}
	return strings.Join(fails, "\n") + "\n...\n" + strings.Join(tail, "\n") + "\n"
}

// step runs one generator Job: it is created with a start instant Lead
// from now, its shards are copied as each finishes under dir, and merged
// (the caller writes the merged level).
func (c *Controller) step(ctx context.Context, st *Step, dir string) (*load.Result, StepRecord, error) {
	job := st.Job.DeepCopy()
	start := c.Now().Add(c.Lead).UTC().Truncate(time.Second)
	setStart(job, start)
	rec := StepRecord{Job: job.Name, Start: start, Dir: dir}
	shards := int(*job.Spec.Completions)
	rec.Shards = shards
	c.say("level %d of %s (x%d) on %s, trial %d: %d shard(s) start at %s", st.Level, st.Implementation, st.Replicas, st.Workload, st.Trial, shards, start.Format(time.RFC3339))
	if err := c.create(ctx, job); err != nil {
		return nil, rec, err
	}
	fail := func(err error) (*load.Result, StepRecord, error) {
		rec.Error = err.Error()
		return nil, rec, err
	}
	// The planned end: every shard's warm-up and measured time, plus its
	// requests' timeout, plus the grace.
	end := start.Add(st.Warmup + durationOf(job) + c.Grace)
	collected := map[int]string{}
	sel := map[string]string{LabelName: job.Name}
	for len(collected) < shards {
		pods, err := c.pods(ctx, job.Namespace, sel)
		if err != nil {
			return fail(err)
		}
		for i := range pods {
			pod := &pods[i]
			idx, err := strconv.Atoi(pod.Annotations[batchv1.JobCompletionIndexAnnotation])
			if err != nil || idx < 0 || idx >= shards {
				continue
			}
			if _, ok := collected[idx]; ok {
				continue
			}
			if err := c.diagnose(ctx, pod); err != nil {
				return fail(fmt.Errorf("shard %d/%d: %w", idx+1, shards, err))
			}
			if pod.Status.Phase != corev1.PodRunning {
				continue
			}
			shardDir := filepath.Join(dir, "shards", "shard-"+strconv.Itoa(idx+1))
			ok, err := c.collect(ctx, pod, "attack", filepath.Join(ResultsDir, "shard-"+strconv.Itoa(idx+1)), shardDir, true)
			if err != nil {
				return fail(fmt.Errorf("shard %d/%d, pod %s: copying its results: %w", idx+1, shards, pod.Name, err))
			}
			if ok {
				collected[idx] = shardDir
				c.say("  shard %d/%d collected from %s", idx+1, shards, pod.Name)
			}
		}
		if len(collected) == shards {
			break
		}
		if c.Now().After(end) {
			var missing []string
			for i := 0; i < shards; i++ {
				if _, ok := collected[i]; !ok {
					missing = append(missing, strconv.Itoa(i+1))
				}
			}
			return fail(fmt.Errorf("job %s: shard(s) %s of %d did not finish by %s (the level was planned to end %s earlier) (hint: kubectl -n %s logs job/%s)",
				job.Name, strings.Join(missing, ","), shards, end.Format(time.RFC3339), c.Grace, job.Namespace, job.Name))
		}
		if err := c.sleep(ctx); err != nil {
			return fail(err)
		}
	}
	// The samplers' files of every service pod.
	pods, err := c.pods(ctx, job.Namespace, st.Deployment.Deployment.Spec.Selector.MatchLabels)
	if err == nil {
		for _, pod := range pods {
			if _, err := c.collect(ctx, &pod, "sampler", SamplesDir, filepath.Join(dir, "samples", pod.Name), false); err != nil {
				c.say("  samples of %s: %v", pod.Name, err)
			}
		}
	}
	var results []*load.Result
	for i := 0; i < shards; i++ {
		r, err := load.ReadDir(collected[i])
		if err != nil {
			return fail(fmt.Errorf("shard %d/%d: %w", i+1, shards, err))
		}
		results = append(results, r)
		rec.Began = append(rec.Began, r.Summary.Start)
	}
	merged, err := load.Merge(results...)
	if err != nil {
		return fail(err)
	}
	merged.Summary.Warnings = append(merged.Summary.Warnings, lateShards(start.Add(st.Warmup), rec.Began)...)
	c.say("  merged %d shards: %d requests, %d errors", shards, merged.Summary.Total.Samples, merged.Summary.Total.Errors)
	bg := metav1.DeletePropagationBackground
	c.Client.BatchV1().Jobs(job.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	c.waitGone(ctx, job.Namespace, sel)
	return merged, rec, nil
}

// GoneTimeout bounds the wait for a finished level's pods to go.
const GoneTimeout = time.Minute

// waitGone waits, at most GoneTimeout, until no pod matches labels: a
// level's shards still terminating hold their CPU requests (on a small
// node the next task did not fit beside them) and would run beside the
// next level.
func (c *Controller) waitGone(ctx context.Context, ns string, labels map[string]string) {
	deadline := c.Now().Add(GoneTimeout)
	for c.Now().Before(deadline) {
		pods, err := c.pods(ctx, ns, labels)
		if err != nil || len(pods) == 0 {
			return
		}
		if c.sleep(ctx) != nil {
			return
		}
	}
	c.say("  the pods of %v are still there after %s", labels, GoneTimeout)
}

// lateShards names each shard that began measuring more than LateShard
// after planned, when the level's shards were to begin together.
func lateShards(planned time.Time, began []time.Time) []string {
	var out []string
	for i, b := range began {
		if late := b.Sub(planned); late > LateShard {
			out = append(out, fmt.Sprintf("shard %d/%d began measuring %.1f s after the level's instant (its pod started late; a longer k8s run --lead gives pods more time): the merged rate is short of the plan's over those seconds",
				i+1, len(began), late.Seconds()))
		}
	}
	return out
}

// collect copies folder from a container into dst over the exec API; with
// done it copies only a finished shard (and releases it), reporting false
// while the shard still runs.
func (c *Controller) collect(ctx context.Context, pod *corev1.Pod, container, folder, dst string, done bool) (bool, error) {
	cmd := []string{"showdown", "k8s", "pack", folder}
	if done {
		cmd = append(cmd, "--done", "--release")
	}
	var buf bytes.Buffer
	if err := c.Exec.Exec(ctx, pod.Namespace, pod.Name, container, cmd, &buf); err != nil {
		var ee interface{ ExitStatus() int }
		if done && errors.As(err, &ee) && ee.ExitStatus() == ExitNotFinished {
			return false, nil // not finished yet
		}
		return false, err
	}
	return true, Unpack(&buf, dst)
}

// placement records the node of every pod of the run.
func (c *Controller) placement(ctx context.Context, ns string, cl *Cluster) {
	list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, p := range cl.Pods {
		seen[p.Pod] = true
	}
	for _, p := range list.Items {
		if !seen[p.Name] && p.Spec.NodeName != "" {
			cl.Pods = append(cl.Pods, Placement{Pod: p.Name, Role: p.Labels[LabelComponent], Node: p.Spec.NodeName, QoS: string(p.Status.QOSClass)})
		}
	}
}

// setStart rewrites the start instant of a rendered generator Job.
func setStart(job *batchv1.Job, start time.Time) {
	s := start.UTC().Format(time.RFC3339)
	job.Annotations["showdown/start"] = s
	args := job.Spec.Template.Spec.Containers[0].Args
	for i := range args {
		if args[i] == "--start-at" && i+1 < len(args) {
			args[i+1] = s
		}
	}
}

// durationOf is a Job's measured time and timeout, read back from its
// attack flags.
func durationOf(job *batchv1.Job) time.Duration {
	var total time.Duration
	args := job.Spec.Template.Spec.Containers[0].Args
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--duration" || args[i] == "--timeout" {
			if d, err := time.ParseDuration(args[i+1]); err == nil {
				total += d
			}
		}
	}
	return total
}

// writeRun writes run.json through package results: the local runner's
// record (what results.ReadRun and the report read) with the cluster
// beside it under "kubernetes".
func (c *Controller) writeRun(dir string, r *results.Run, cl *Cluster) error {
	cl.Tasks = c.tasks
	b, err := json.Marshal(cl)
	if err != nil {
		return err
	}
	r.Kubernetes = b
	return results.WriteRun(dir, r)
}
