package k8s

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/warmup"
)

// DefaultTaskTimeout bounds an in-cluster task (contract check, audit)
// from its creation to its pod's end, image pull included.
const DefaultTaskTimeout = 5 * time.Minute

// A task pod's resources: requests == limits, so it is Guaranteed like
// everything else the run creates.
var (
	taskCPU    = resource.MustParse("500m")
	taskMemory = resource.MustParse("256Mi")
)

// taskJob is a one-pod Job running showdown with args beside the service
// of d: the showdown image (the generator's), the service's database
// URLs in its environment.
func taskJob(name, kind string, st *Step, args []string) *batchv1.Job {
	gen := st.Job.Spec.Template.Spec.Containers[0]
	var env []corev1.EnvVar
	for _, e := range st.Deployment.Deployment.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "DATABASE_URL" || e.Name == "MYSQL_URL" {
			env = append(env, e)
		}
	}
	labels := map[string]string{}
	for k, v := range st.Job.Labels {
		labels[k] = v
	}
	labels[LabelComponent], labels[LabelName] = kind, name
	one, zero := int32(1), int32(0)
	deadline := int64(DefaultTaskTimeout.Seconds())
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: st.Job.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{Completions: &one, Parallelism: &one, BackoffLimit: &zero, ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: kind, Image: gen.Image, ImagePullPolicy: gen.ImagePullPolicy,
					Args: args, Env: env,
					Resources: guaranteed(taskCPU, taskMemory),
				}},
			}}},
	}
}

// runTask creates job, waits for its pod to end and deletes it. A pod
// that fails (a contract check or an audit that found something) is an
// error quoting its last log lines.
func (c *Controller) runTask(ctx context.Context, job *batchv1.Job) (err error) {
	defer c.record(job, c.Now(), &err)
	if err := c.create(ctx, job); err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	defer c.Client.BatchV1().Jobs(job.Namespace).Delete(context.WithoutCancel(ctx), job.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	deadline := c.Now().Add(DefaultTaskTimeout)
	sel := map[string]string{LabelName: job.Name, LabelComponent: job.Labels[LabelComponent]}
	for {
		pods, err := c.pods(ctx, job.Namespace, sel)
		if err != nil {
			return err
		}
		for i := range pods {
			p := &pods[i]
			switch p.Status.Phase {
			case corev1.PodSucceeded:
				return nil
			case corev1.PodFailed:
				return c.podError(ctx, p, job.Spec.Template.Spec.Containers[0].Name, "Failed",
					fmt.Sprintf("%s failed: %s", strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "), exitOf(p)), false)
			}
			if err := c.diagnose(ctx, p); err != nil {
				return err
			}
		}
		if c.Now().After(deadline) {
			return fmt.Errorf("job %s/%s did not finish within %s (hint: kubectl -n %s logs job/%s)", job.Namespace, job.Name, DefaultTaskTimeout, job.Namespace, job.Name)
		}
		if err := c.sleep(ctx); err != nil {
			return err
		}
	}
}

// record adds the task job, begun at start and ended now with *err, to
// the run's record.
func (c *Controller) record(job *batchv1.Job, start time.Time, err *error) {
	t := TaskRecord{Job: job.Name, Kind: job.Labels[LabelComponent], Start: start.UTC(), End: c.Now().UTC()}
	if *err != nil {
		t.Error = (*err).Error()
	}
	c.tasks = append(c.tasks, t)
}

// exitOf describes how a failed pod's container ended.
func exitOf(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("exit code %d %s", t.ExitCode, t.Reason)
		}
	}
	return p.Status.Message
}

// verify runs the contract suite from inside the cluster against the
// service of st, as the local runner does before it measures.
func (c *Controller) verify(ctx context.Context, st *Step) error {
	name := dnsLabel("verify-"+st.Deployment.Deployment.Name+"-"+st.Workload, 63)
	url := fmt.Sprintf("http://%s:%d", st.Deployment.Service.Name, DefaultPort)
	via := "its Service"
	// The suite closes its connections, so a Service name would be
	// looked up for every request; on the local cluster one of hundreds
	// timed out (CoreDNS on a busy node). The Service's address is the
	// same path through kube-proxy without the lookups.
	if svc, err := c.Client.CoreV1().Services(st.Job.Namespace).Get(ctx, st.Deployment.Service.Name, metav1.GetOptions{}); err == nil &&
		svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		url, via = fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, DefaultPort), "its Service's address "+svc.Spec.ClusterIP
	}
	if st.Deployment.Replicas > 1 {
		// The contract reads a process's own counters (/metrics after
		// requests): behind a Service of several pods they come from
		// another pod. One pod is checked by its address; they run one
		// image.
		pods, err := c.pods(ctx, st.Job.Namespace, st.Deployment.Deployment.Spec.Selector.MatchLabels)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if podReady(&p) && p.Status.PodIP != "" {
				url, via = fmt.Sprintf("http://%s:%d", p.Status.PodIP, DefaultPort), "pod "+p.Name+" of "+strconv.Itoa(st.Deployment.Replicas)
				break
			}
		}
	}
	c.say("checking the contract of %s on %s from inside the cluster, through %s (%s)", st.Deployment.Deployment.Name, st.Workload, via, name)
	if err := c.runTask(ctx, taskJob(name, "verify", st, []string{"verify", "--url", url, "--workload", st.Workload})); err != nil {
		return fmt.Errorf("contract check of %s on %s: %w", st.Deployment.Deployment.Name, st.Workload, err)
	}
	return nil
}

// audit checks the workload's invariants in the in-cluster database after
// the levels of st's workload, as the local runner does.
func (c *Controller) audit(ctx context.Context, st *Step) error {
	name := dnsLabel("audit-"+st.Deployment.Deployment.Name+"-"+st.Workload, 63)
	c.say("auditing %s's database after %s (%s)", st.Workload, st.Deployment.Deployment.Name, name)
	if err := c.runTask(ctx, taskJob(name, "audit", st, []string{"k8s", "audit", "--workload", st.Workload})); err != nil {
		return fmt.Errorf("audit of %s after %s: %w", st.Workload, st.Deployment.Deployment.Name, err)
	}
	return nil
}

// WarmupDir is the folder under ResultsDir where showdown k8s warmup
// leaves its record (results.WarmupFile).
const WarmupDir = "warmup"

// warmUp warms the service of st up before its workload's first level
// with the local lab's rule (package warmup): with warmup: auto, one pod
// of the generator's size drives the first level's load until the
// steady-state rule holds, at most the budget; its record is copied back
// as a shard's results are. A fixed warm-up runs in the first level's
// shards instead (nil here).
func (c *Controller) warmUp(ctx context.Context, p *plan.Plan, st *Step, first bool, dir string) (_ *results.WarmupRun, err error) {
	var wp plan.Warmup
	for _, im := range p.Implementations {
		if im.ID() == st.Implementation {
			wp = p.WarmupOf(im)
		}
	}
	budget := warmup.Budget(wp, first)
	if !wp.Auto || budget <= 0 {
		return nil, nil
	}
	name := dnsLabel("warmup-"+st.Deployment.Deployment.Name+"-"+st.Workload+"-t"+strconv.Itoa(st.Trial), 63)
	base := fmt.Sprintf("http://%s:%d", st.Deployment.Service.Name, DefaultPort)
	args := []string{"k8s", "warmup", "--max", budget.String(), "--auto", "--out", ResultsDir + "/" + WarmupDir, "--hold", DefaultHold.String()}
	if st.Workload == "sku" {
		args = append(args, "--sku-rows", strconv.Itoa(p.Database.SKURows))
	}
	args = append(append(args, "--"), AttackArgs(p, st, base)...)
	job := taskJob(name, "warmup", st, args)
	job.Spec.Template.Spec.Containers[0].Resources = st.Job.Spec.Template.Spec.Containers[0].Resources
	job.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}}
	job.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	deadline := int64((budget + DefaultHold + DefaultTaskTimeout).Seconds())
	job.Spec.ActiveDeadlineSeconds = &deadline
	c.say("warming %s up on %s (%s): until steady, at most %s", st.Deployment.Deployment.Name, st.Workload, name, budget)
	defer c.record(job, c.Now(), &err)
	if err := c.create(ctx, job); err != nil {
		return nil, err
	}
	bg := metav1.DeletePropagationBackground
	defer c.Client.BatchV1().Jobs(job.Namespace).Delete(context.WithoutCancel(ctx), job.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	end := c.Now().Add(budget + c.Grace + DefaultTaskTimeout)
	dst := filepath.Join(dir, "warmup")
	for {
		pods, err := c.pods(ctx, job.Namespace, map[string]string{LabelName: name, LabelComponent: "warmup"})
		if err != nil {
			return nil, err
		}
		for i := range pods {
			pod := &pods[i]
			if err := c.diagnose(ctx, pod); err != nil {
				return nil, fmt.Errorf("warm-up of %s: %w", st.Deployment.Deployment.Name, err)
			}
			if pod.Status.Phase != corev1.PodRunning {
				continue
			}
			ok, err := c.collect(ctx, pod, "warmup", ResultsDir+"/"+WarmupDir, dst, true)
			if err != nil {
				return nil, fmt.Errorf("warm-up of %s, pod %s: copying its record: %w", st.Deployment.Deployment.Name, pod.Name, err)
			}
			if ok {
				wu, err := results.ReadWarmup(dst)
				if err != nil {
					return nil, fmt.Errorf("warm-up of %s: %w", st.Deployment.Deployment.Name, err)
				}
				c.say("  warmed up in %.1f s, %d requests, steady: %v", wu.Seconds, wu.Requests, wu.Steady)
				return wu, nil
			}
		}
		if c.Now().After(end) {
			return nil, fmt.Errorf("job %s/%s: the warm-up did not finish by %s (hint: kubectl -n %s logs job/%s)", job.Namespace, name, end.Format(time.RFC3339), job.Namespace, name)
		}
		if err := c.sleep(ctx); err != nil {
			return nil, err
		}
	}
}
