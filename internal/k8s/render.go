// Package k8s runs a plan on Kubernetes: Render turns a plan.Plan into the
// objects of one run (a namespace, the databases, each implementation at
// each replica count, the sharded generator), and Controller applies them
// with client-go, runs the levels, collects every shard and merges them.
package k8s

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/workloads"
)

// Defaults of Options and of the plan fields showdown k8s reads.
const (
	// DefaultRegistry prefixes every image name; podman names local
	// images localhost/NAME, which kind and k3s can load as they are.
	DefaultRegistry = "localhost/showdown"
	// DefaultTag is the images' tag.
	DefaultTag = "latest"
	// DefaultServiceCPU and DefaultServiceMemory are the service's
	// requests and limits when the plan sets no limits: the sources'
	// 1 vCPU / 1 GiB boxes.
	DefaultServiceCPU    = 1.0
	DefaultServiceMemory = 1 << 30
	// DefaultGeneratorCPU and DefaultGeneratorMemory size one generator pod.
	DefaultGeneratorCPU    = 1.0
	DefaultGeneratorMemory = 512 << 20
	// DefaultMicrosPerRequest is the generator's CPU per request: 21.7 µs
	// measured in the closed model and 16.7-17.8 µs in the open model
	// (bench/README.md), rounded up.
	DefaultMicrosPerRequest = 22.0
	// DefaultHeadroom is the share of a generator pod's CPU limit the
	// sizing plans to use, so a generator is never the bottleneck.
	DefaultHeadroom = 0.7
	// DefaultPort is the service containers' port.
	DefaultPort = 8080
	// DefaultLead is how long before the start instant a generator Job is
	// created, so every pod is scheduled and waiting when it comes.
	DefaultLead = 45 * time.Second
	// DefaultHold is how long a finished shard keeps its files for the
	// controller to copy before it exits anyway.
	DefaultHold = 10 * time.Minute
	// PostgresImage and MariaDBImage are the official images the
	// databases run from unless Options name others (a cluster that cannot
	// pull them runs 'showdown images build postgres').
	PostgresImage = "docker.io/library/postgres:15"
	MariaDBImage  = "docker.io/library/mariadb:11.4"
	// DatabaseCPU and DatabaseMemory are each database pod's requests
	// and limits unless Options say others: two CPUs and 2 GiB, so a
	// database is never the pod the scheduler squeezes.
	DatabaseCPU    = "2"
	DatabaseMemory = "2Gi"
	// ResultsDir is where shards write inside the generator pods, and
	// SamplesDir where samplers write inside the service pods.
	ResultsDir = "/results"
	SamplesDir = "/samples"
)

// Label keys on every object showdown creates.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelComponent = "app.kubernetes.io/component"
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
)

// Options say where and as what a plan is rendered.
type Options struct {
	// Namespace is the run's namespace; empty: "showdown-PLAN-RUNID".
	Namespace string
	// RunID names the run (default: the start instant as 20060102t150405).
	RunID string
	// Registry and Tag name the images: REGISTRY/NAME:TAG.
	Registry, Tag string
	// Start is the first step's start instant; the others follow in plan
	// order, one after another (showdown k8s run sets each as it goes).
	Start time.Time
	// PostgresImage and MariaDBImage are the databases' images (default
	// the official ones, PostgresImage and MariaDBImage).
	PostgresImage, MariaDBImage string
	// DatabaseCPU and DatabaseMemory are each database pod's requests and
	// limits (default DatabaseCPU, DatabaseMemory).
	DatabaseCPU, DatabaseMemory resource.Quantity
}

// ParseQuantity reads a resource quantity given as flag ("" is the zero
// quantity, the default).
func ParseQuantity(flag, s string) (resource.Quantity, error) {
	if s == "" {
		return resource.Quantity{}, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("%s %q: %w", flag, s, err)
	}
	if q.Sign() <= 0 {
		return q, fmt.Errorf("%s %q: must be above zero", flag, s)
	}
	return q, nil
}

func (o Options) withDefaults(p *plan.Plan) Options {
	if o.Registry == "" {
		o.Registry = DefaultRegistry
	}
	if o.Tag == "" {
		o.Tag = DefaultTag
	}
	if o.PostgresImage == "" {
		o.PostgresImage = PostgresImage
	}
	if o.MariaDBImage == "" {
		o.MariaDBImage = MariaDBImage
	}
	if o.DatabaseCPU.IsZero() {
		o.DatabaseCPU = resource.MustParse(DatabaseCPU)
	}
	if o.DatabaseMemory.IsZero() {
		o.DatabaseMemory = resource.MustParse(DatabaseMemory)
	}
	if o.Start.IsZero() {
		o.Start = time.Now().UTC().Add(2 * time.Minute).Truncate(time.Minute)
	}
	if o.RunID == "" {
		o.RunID = o.Start.UTC().Format("20060102t150405")
	}
	if o.Namespace == "" {
		o.Namespace = dnsLabel("showdown-"+p.Name+"-"+o.RunID, 63)
	}
	return o
}

// Image is the reference of image name (a service or "showdown").
func (o Options) Image(name string) string {
	return strings.TrimSuffix(o.Registry, "/") + "/" + name + ":" + o.Tag
}

// Manifests are the objects of one run.
type Manifests struct {
	Namespace string
	// Base holds the namespace and the databases, created first.
	Base []Object
	// Deployments holds each implementation at each replica count: a
	// Deployment and its Service.
	Deployments []*Deployment
	// Steps are the levels in the order they run, each a generator Job.
	Steps []*Step
	// Sizing says how the generator was sized.
	Sizing Sizing
}

// Object is one Kubernetes object of the k8s.io/api types.
type Object interface {
	metav1.Object
	runtime.Object
}

// Deployment is one implementation at one replica count.
type Deployment struct {
	Implementation string
	Replicas       int
	Deployment     *appsv1.Deployment
	Service        *corev1.Service
}

// Step is one level of one implementation at one replica count on one
// workload in one trial, run by one generator Job.
type Step struct {
	Implementation string
	Workload       string
	Replicas       int
	Level          int
	Trial          int
	// Deployment is the one the Job drives.
	Deployment *Deployment
	Job        *batchv1.Job
	// Start is when the shards start (after their warm-up, if any).
	Start time.Time
	// Slot is how long the step takes from Start, warm-up included.
	Slot time.Duration
	// Warmup is the step's uncounted warm-up (the first level only).
	Warmup time.Duration
}

// Objects lists every object in creation order.
func (m *Manifests) Objects() []Object {
	out := append([]Object(nil), m.Base...)
	for _, d := range m.Deployments {
		out = append(out, d.Service, d.Deployment)
	}
	for _, s := range m.Steps {
		out = append(out, s.Job)
	}
	return out
}

// Sizing is the generator's sizing: how many pods the top rate needs.
type Sizing struct {
	Pods             int
	CPU              float64
	Memory           int64
	MicrosPerRequest float64
	// TopRate is the plan's highest rate (open model), 0 otherwise.
	TopRate int
	// Needed is the pods the top rate needs.
	Needed int
}

// SizingError is a plan whose generator pods cannot produce its top rate.
type SizingError struct{ Sizing }

func (e *SizingError) Error() string {
	s := e.Sizing
	return fmt.Sprintf("generator.pods: %d pods of %g CPU produce at most %.0f req/s at %g µs of CPU per request (%.0f%% of each pod's CPU), but the top level asks for %d req/s",
		s.Pods, s.CPU, capacity(s.Pods, s.CPU, s.MicrosPerRequest), s.MicrosPerRequest, DefaultHeadroom*100, s.TopRate)
}

// Hint says how many pods are needed.
func (e *SizingError) Hint() string {
	return fmt.Sprintf("set generator.pods to %d or more (or raise generator.cpu), or drop generator.pods to let showdown size it", e.Needed)
}

// capacity is the rate pods of cpu cores produce at us µs per request.
func capacity(pods int, cpu, us float64) float64 {
	return float64(pods) * cpu * DefaultHeadroom * 1e6 / us
}

// PodsFor returns the generator pods of cpu cores each that rate needs at
// us µs of CPU per request.
func PodsFor(rate int, cpu, us float64) int {
	n := int(math.Ceil(float64(rate) * us / 1e6 / (cpu * DefaultHeadroom)))
	return max(n, 1)
}

// Size sizes the generator of plan p, or refuses it.
func Size(p *plan.Plan) (Sizing, error) {
	g := p.Generator
	s := Sizing{Pods: g.Pods, CPU: g.CPU, Memory: int64(g.Memory), MicrosPerRequest: g.MicrosPerRequest}
	if s.CPU == 0 {
		s.CPU = DefaultGeneratorCPU
	}
	if s.Memory == 0 {
		s.Memory = DefaultGeneratorMemory
	}
	if s.MicrosPerRequest == 0 {
		s.MicrosPerRequest = DefaultMicrosPerRequest
	}
	s.Needed = 1
	if p.Load.Model == "open" {
		for _, l := range p.Load.Levels {
			s.TopRate = max(s.TopRate, l)
		}
		s.Needed = PodsFor(s.TopRate, s.CPU, s.MicrosPerRequest)
	}
	if s.Pods == 0 {
		s.Pods = s.Needed
	}
	if s.Pods < s.Needed {
		return s, &SizingError{s}
	}
	if p.Load.Model == "closed" {
		for _, l := range p.Load.Levels {
			if l < s.Pods {
				return s, fmt.Errorf("generator.pods: %d pods but a level of %d users leaves some shards without a user (hint: at most %d pods)", s.Pods, l, l)
			}
		}
	}
	return s, nil
}

// Render returns the manifests of plan p.
func Render(p *plan.Plan, o Options) (*Manifests, error) {
	if len(p.Cores) > 0 {
		// Pods get CPUs by requests and limits, not by pinning: a count of
		// cores there is a pod's CPU limit, which the plan does not set.
		return nil, fmt.Errorf("%s: cores is a dimension of local runs (arms pinned to CPUs 0..n-1); on Kubernetes scale with replicas", p.File)
	}
	o = o.withDefaults(p)
	sz, err := Size(p)
	if err != nil {
		return nil, err
	}
	m := &Manifests{Namespace: o.Namespace, Sizing: sz}
	r := &renderer{p: p, o: o, m: m}
	m.Base = append(m.Base, r.namespace())
	r.databases()
	replicas := p.Replicas
	if len(replicas) == 0 {
		replicas = []int{1}
	}
	start := o.Start
	for trial := 1; trial <= p.Trials; trial++ {
		for _, im := range p.Implementations {
			for _, n := range replicas {
				d := r.deployment(im, n)
				for _, w := range p.Workloads {
					for i, level := range p.Load.Levels {
						st := &Step{Implementation: im.ID(), Workload: w.Name, Replicas: n, Level: level, Trial: trial, Deployment: d, Start: start}
						if i == 0 {
							st.Warmup = time.Duration(p.Load.Warmup)
						}
						st.Job = r.job(st, start)
						st.Slot = st.Warmup + time.Duration(p.Load.Duration) + DefaultLead
						start = start.Add(st.Slot)
						m.Steps = append(m.Steps, st)
					}
				}
			}
		}
	}
	return m, nil
}

type renderer struct {
	p    *plan.Plan
	o    Options
	m    *Manifests
	seen map[string]*Deployment
}

func (r *renderer) labels(component, name string) map[string]string {
	return map[string]string{
		LabelManagedBy: "showdown",
		LabelPartOf:    "showdown",
		LabelInstance:  dnsLabel(r.p.Name, 63),
		LabelComponent: component,
		LabelName:      name,
	}
}

func (r *renderer) meta(name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: r.o.Namespace, Labels: r.labels(component, name)}
}

func (r *renderer) namespace() *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.o.Namespace, Labels: r.labels("run", r.o.RunID)}}
	ns.Labels["showdown-run"] = dnsLabel(r.o.RunID, 63)
	return typed(ns, "v1", "Namespace")
}

// Database credentials of the databases showdown starts (the same as the
// local runner's).
const (
	dbUser     = "showdown"
	dbPassword = "showdown"
	dbName     = "showdown"
)

// needs reports which engines the plan's workloads need.
func (r *renderer) needs(engine string) bool {
	for _, w := range r.p.Workloads {
		if string(workloads.Database(w.Name)) == engine {
			return true
		}
	}
	return false
}

func (r *renderer) workloadsOf(engine string) []string {
	var ws []string
	for _, w := range r.p.Workloads {
		if string(workloads.Database(w.Name)) == engine {
			ws = append(ws, w.Name)
		}
	}
	return ws
}

// postgresURL and mysqlURL are the services' database URLs.
func (r *renderer) postgresURL() string {
	if r.p.Database.URL != "" {
		return r.p.Database.URL
	}
	return fmt.Sprintf("postgres://%s:%s@postgres:5432/%s?sslmode=disable", dbUser, dbPassword, dbName)
}

func (r *renderer) mysqlURL() string {
	if r.p.Database.MySQLURL != "" {
		return r.p.Database.MySQLURL
	}
	return fmt.Sprintf("mysql://%s:%s@mariadb:3306/%s", dbUser, dbPassword, dbName)
}

func (r *renderer) databases() {
	type engine struct {
		name, image, url string
		port             int32
		env              []corev1.EnvVar
		args             []string
		ready            []string
	}
	var es []engine
	if r.needs("postgres") && r.p.Database.URL == "" {
		es = append(es, engine{name: "postgres", image: r.o.PostgresImage, port: 5432,
			env:   []corev1.EnvVar{{Name: "POSTGRES_USER", Value: dbUser}, {Name: "POSTGRES_PASSWORD", Value: dbPassword}, {Name: "POSTGRES_DB", Value: dbName}},
			args:  []string{"-c", "max_connections=" + strconv.Itoa(r.p.Database.MaxConnections)},
			ready: []string{"pg_isready", "-h", "127.0.0.1", "-U", dbUser, "-d", dbName}})
	}
	if r.needs("mysql") && r.p.Database.MySQLURL == "" {
		es = append(es, engine{name: "mariadb", image: r.o.MariaDBImage, port: 3306,
			env: []corev1.EnvVar{{Name: "MARIADB_USER", Value: dbUser}, {Name: "MARIADB_PASSWORD", Value: dbPassword}, {Name: "MARIADB_DATABASE", Value: dbName},
				{Name: "MARIADB_RANDOM_ROOT_PASSWORD", Value: "1"}},
			args:  []string{"--max-connections=" + strconv.Itoa(r.p.Database.MaxConnections)},
			ready: []string{"mariadb-admin", "ping", "-h", "127.0.0.1", "-u" + dbUser, "-p" + dbPassword}})
	}
	for _, e := range es {
		engineName := e.name
		if engineName == "mariadb" {
			engineName = "mysql"
		}
		sel := map[string]string{LabelComponent: "database", LabelName: e.name}
		svc := typed(&corev1.Service{ObjectMeta: r.meta(e.name, "database"), Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, Selector: sel,
			Ports: []corev1.ServicePort{{Name: e.name, Port: e.port, TargetPort: intstr.FromInt32(e.port)}},
		}}, "v1", "Service")
		initArgs := []string{"k8s", "initdb", "--engine", engineName, "--out", "/initdb",
			"--workloads", strings.Join(r.workloadsOf(engineName), ","),
			"--seed", strconv.FormatInt(r.p.Database.Seed, 10)}
		if engineName == "mysql" {
			initArgs = append(initArgs, "--sku-rows", strconv.Itoa(r.p.Database.SKURows), "--sku-index="+strconv.FormatBool(*r.p.Database.SKUIndex))
		}
		one := int32(1)
		pod := corev1.PodSpec{
			InitContainers: []corev1.Container{{
				Name: "initdb", Image: r.o.Image("showdown"), ImagePullPolicy: corev1.PullIfNotPresent,
				Args:         initArgs,
				VolumeMounts: []corev1.VolumeMount{{Name: "initdb", MountPath: "/initdb"}},
				Resources:    guaranteed(resource.MustParse("500m"), resource.MustParse("256Mi")),
			}},
			Containers: []corev1.Container{{
				Name: e.name, Image: e.image, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: e.args, Env: e.env,
				Ports:          []corev1.ContainerPort{{Name: e.name, ContainerPort: e.port}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: e.ready}}, PeriodSeconds: 2, FailureThreshold: 3},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "initdb", MountPath: "/docker-entrypoint-initdb.d"},
					{Name: "data", MountPath: dataDir(e.name)},
				},
				Resources: guaranteed(r.o.DatabaseCPU, r.o.DatabaseMemory),
			}},
			// emptyDir: a restart of the pod is a fresh database, as the
			// local runner's restart policy wants.
			Volumes: []corev1.Volume{
				{Name: "initdb", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		}
		ss := typed(&appsv1.StatefulSet{ObjectMeta: r.meta(e.name, "database"), Spec: appsv1.StatefulSetSpec{
			ServiceName: e.name, Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: r.labels("database", e.name)}, Spec: pod},
		}}, "apps/v1", "StatefulSet")
		r.m.Base = append(r.m.Base, svc, ss)
	}
}

func dataDir(engine string) string {
	if engine == "postgres" {
		return "/var/lib/postgresql/data"
	}
	return "/var/lib/mysql"
}

// guaranteed returns requests equal to limits: Guaranteed QoS once every
// container of the pod has it.
func guaranteed(cpu, mem resource.Quantity) corev1.ResourceRequirements {
	l := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	return corev1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

func cpuQuantity(cores float64) resource.Quantity {
	return *resource.NewMilliQuantity(int64(math.Round(cores*1000)), resource.DecimalSI)
}

// sampler sizes: small, and equal requests and limits so the service pod
// keeps Guaranteed QoS.
var (
	samplerCPU    = resource.MustParse("100m")
	samplerMemory = resource.MustParse("64Mi")
)

func (r *renderer) deployment(im plan.Implementation, n int) *Deployment {
	name := dnsLabel(fmt.Sprintf("%s-x%d", im.ID(), n), 63)
	if d, ok := r.seen[name]; ok {
		return d
	}
	cpu, mem := r.p.Limits.CPU, int64(r.p.Limits.Memory)
	if cpu == 0 {
		cpu = DefaultServiceCPU
	}
	if mem == 0 {
		mem = DefaultServiceMemory
	}
	env := []corev1.EnvVar{{Name: "HOST", Value: "0.0.0.0"}, {Name: "PORT", Value: strconv.Itoa(DefaultPort)}}
	if r.needs("postgres") {
		env = append(env, corev1.EnvVar{Name: "DATABASE_URL", Value: r.postgresURL()})
	}
	if r.needs("mysql") {
		env = append(env, corev1.EnvVar{Name: "MYSQL_URL", Value: r.mysqlURL()})
	}
	// The arm's environment as under run, without a cores knob: Render
	// refuses a plan with cores.
	for _, kv := range sortedEnv(r.p.ArmEnv(im, nil, nil)) {
		env = append(env, kv)
	}
	sel := map[string]string{LabelComponent: "service", LabelName: name}
	yes := true
	replicas := int32(n)
	pod := corev1.PodSpec{
		// The sampler sees the service's processes through the shared
		// process namespace.
		ShareProcessNamespace: &yes,
		Containers: []corev1.Container{{
			Name: "service", Image: r.o.Image(im.Service), ImagePullPolicy: corev1.PullIfNotPresent,
			Env:   env,
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: DefaultPort}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("http")}},
				PeriodSeconds: 1, FailureThreshold: 3},
			Resources: guaranteed(cpuQuantity(cpu), *resource.NewQuantity(mem, resource.BinarySI)),
		}, {
			Name: "sampler", Image: r.o.Image("showdown"), ImagePullPolicy: corev1.PullIfNotPresent,
			Args:         []string{"k8s", "sampler", "--out", SamplesDir + "/samples.csv", "--interval", "1s"},
			VolumeMounts: []corev1.VolumeMount{{Name: "samples", MountPath: SamplesDir}},
			Resources:    guaranteed(samplerCPU, samplerMemory),
		}},
		Volumes: []corev1.Volume{{Name: "samples", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	d := &Deployment{Implementation: im.ID(), Replicas: n}
	d.Deployment = typed(&appsv1.Deployment{ObjectMeta: r.meta(name, "service"), Spec: appsv1.DeploymentSpec{
		Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: sel},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: r.labels("service", name)}, Spec: pod},
	}}, "apps/v1", "Deployment")
	d.Service = typed(&corev1.Service{ObjectMeta: r.meta(name, "service"), Spec: corev1.ServiceSpec{
		Selector: sel,
		Ports:    []corev1.ServicePort{{Name: "http", Port: DefaultPort, TargetPort: intstr.FromString("http")}},
	}}, "v1", "Service")
	if r.seen == nil {
		r.seen = map[string]*Deployment{}
	}
	r.seen[name] = d
	r.m.Deployments = append(r.m.Deployments, d)
	return d
}

// JobName names the generator Job of a step.
func JobName(st *Step) string {
	return dnsLabel(fmt.Sprintf("gen-%s-x%d-%s-l%d-t%d", st.Implementation, st.Replicas, st.Workload, st.Level, st.Trial), 52)
}

// AttackArgs are the attack flags of a step, without --shard and --out,
// which the shard entrypoint adds.
func AttackArgs(p *plan.Plan, st *Step, baseURL string) []string {
	l := p.Load
	sc := "workloads/" + st.Workload + "/scenario.yaml"
	for _, w := range p.Workloads {
		if w.Name == st.Workload && w.Scenario != "" {
			sc = w.Scenario
		}
	}
	args := []string{"--scenario", sc, "--base-url", baseURL, "--seed", strconv.FormatInt(p.Database.Seed, 10),
		"--duration", time.Duration(l.Duration).String(), "--timeout", time.Duration(l.Timeout).String()}
	if l.Model == "open" {
		args = append(args, "--rate", strconv.Itoa(st.Level))
		if l.MaxInflight > 0 {
			args = append(args, "--max-inflight", strconv.Itoa(l.MaxInflight))
		}
	} else {
		args = append(args, "--users", strconv.Itoa(st.Level))
		if l.RampUp > 0 {
			args = append(args, "--ramp-up", time.Duration(l.RampUp).String())
		}
		if l.ThinkTime > 0 {
			args = append(args, "--think-time", time.Duration(l.ThinkTime).String())
		}
	}
	if st.Warmup > 0 {
		args = append(args, "--warmup", st.Warmup.String())
	}
	return args
}

func (r *renderer) job(st *Step, start time.Time) *batchv1.Job {
	sz := r.m.Sizing
	name := JobName(st)
	pods := int32(sz.Pods)
	zero := int32(0)
	indexed := batchv1.IndexedCompletion
	base := fmt.Sprintf("http://%s:%d", st.Deployment.Service.Name, DefaultPort)
	args := []string{"k8s", "shard", "--count", strconv.Itoa(sz.Pods), "--start-at", start.UTC().Format(time.RFC3339),
		"--out", ResultsDir, "--hold", DefaultHold.String()}
	if st.Workload == "sku" {
		args = append(args, "--sku-rows", strconv.Itoa(r.p.Database.SKURows))
	}
	args = append(args, "--")
	args = append(args, AttackArgs(r.p, st, base)...)
	deadline := int64((DefaultLead + st.Warmup + time.Duration(r.p.Load.Duration) + time.Duration(r.p.Load.Timeout) + DefaultHold + time.Minute).Seconds())
	meta := r.meta(name, "generator")
	meta.Annotations = map[string]string{
		"showdown/implementation": st.Implementation, "showdown/workload": st.Workload,
		"showdown/replicas": strconv.Itoa(st.Replicas), "showdown/level": strconv.Itoa(st.Level), "showdown/trial": strconv.Itoa(st.Trial),
		"showdown/start": start.UTC().Format(time.RFC3339),
	}
	return typed(&batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{
		CompletionMode: &indexed, Completions: &pods, Parallelism: &pods,
		// A failed shard fails the level: rerunning it would add load the
		// other shards did not see.
		BackoffLimit:          &zero,
		ActiveDeadlineSeconds: &deadline,
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: r.labels("generator", name)}, Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "attack", Image: r.o.Image("showdown"), ImagePullPolicy: corev1.PullIfNotPresent,
				Args:         args,
				VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}},
				Resources:    guaranteed(cpuQuantity(sz.CPU), *resource.NewQuantity(sz.Memory, resource.BinarySI)),
			}},
			Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		}},
	}}, "batch/v1", "Job")
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// dnsLabel turns s into a DNS label of at most n characters; a name that
// had to be cut keeps a hash of the whole so two long names stay apart.
func dnsLabel(s string, n int) string {
	l := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(l) <= n {
		return l
	}
	h := sha256.Sum256([]byte(s))
	return strings.Trim(l[:n-9], "-") + "-" + hex.EncodeToString(h[:4])
}
