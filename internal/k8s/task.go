package k8s

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
func (c *Controller) runTask(ctx context.Context, job *batchv1.Job) error {
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
	c.say("checking the contract of %s on %s from inside the cluster (%s)", st.Deployment.Deployment.Name, st.Workload, name)
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
