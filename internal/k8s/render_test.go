package k8s

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/showdownlab/showdown/internal/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// catalog is the services the test plans may name.
var catalog = plan.Catalog{
	"go-stdlib":   {"string", "bank", "users", "sku"},
	"java-spring": {"string", "bank", "users", "sku"},
	"node-http":   {"string", "bank", "users", "sku"},
}

var start = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

func loadPlan(t *testing.T, file string) *plan.Plan {
	t.Helper()
	p, err := plan.LoadPlan(file, catalog, plan.MachineOf(2))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

// decodeStrict decodes every document of a YAML stream into the
// k8s.io/api types with client-go's scheme, unknown and duplicate fields
// being errors.
func decodeStrict(t *testing.T, stream []byte) []any {
	t.Helper()
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var out []any
	for i, doc := range bytes.Split(stream, []byte("\n---\n")) {
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("document %d: %v\n%s", i+1, err, doc)
		}
		if gvk.Kind == "" {
			t.Fatalf("document %d has no kind", i+1)
		}
		out = append(out, obj)
	}
	return out
}

func TestRenderGolden(t *testing.T) {
	for _, name := range []string{"k8s-open", "k8s-closed-db"} {
		t.Run(name, func(t *testing.T) {
			p := loadPlan(t, filepath.Join("testdata", name+".yaml"))
			m, err := Render(p, Options{Start: start, RunID: "r1"})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteYAML(&buf, m.Objects()); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("rendered manifests differ from %s (go test ./internal/k8s -update to accept):\n%s", golden, firstDiff(buf.String(), string(want)))
			}
			objs := decodeStrict(t, buf.Bytes())
			if len(objs) != len(m.Objects()) {
				t.Errorf("decoded %d objects, rendered %d", len(objs), len(m.Objects()))
			}
			checkObjects(t, p, objs)
		})
	}
}

// checkObjects checks the properties the issue asks of the manifests, on
// the decoded objects.
func checkObjects(t *testing.T, p *plan.Plan, objs []any) {
	t.Helper()
	var ns string
	deployments, jobs := 0, 0
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Namespace:
			ns = o.Name
		case *appsv1.Deployment:
			deployments++
			spec := o.Spec.Template.Spec
			if spec.ShareProcessNamespace == nil || !*spec.ShareProcessNamespace {
				t.Errorf("deployment %s: the sampler needs a shared process namespace", o.Name)
			}
			for _, c := range spec.Containers {
				if !equalResources(c.Resources) {
					t.Errorf("deployment %s, container %s: requests %v != limits %v (no Guaranteed QoS)", o.Name, c.Name, c.Resources.Requests, c.Resources.Limits)
				}
			}
			if got := spec.Containers[1].Args[:2]; got[0] != "k8s" || got[1] != "sampler" {
				t.Errorf("deployment %s: second container runs %v, want the sampler", o.Name, got)
			}
		case *batchv1.Job:
			jobs++
			if o.Spec.CompletionMode == nil || *o.Spec.CompletionMode != batchv1.IndexedCompletion {
				t.Errorf("job %s is not Indexed", o.Name)
			}
			if *o.Spec.Completions != *o.Spec.Parallelism {
				t.Errorf("job %s: completions %d != parallelism %d: shards would not run together", o.Name, *o.Spec.Completions, *o.Spec.Parallelism)
			}
			args := strings.Join(o.Spec.Template.Spec.Containers[0].Args, " ")
			if !strings.Contains(args, "--start-at 20") || !strings.Contains(args, " -- --scenario workloads/") {
				t.Errorf("job %s: args %q lack the start instant or the attack", o.Name, args)
			}
		}
		if m, ok := o.(interface{ GetNamespace() string }); ok && ns != "" && m.GetNamespace() != "" && m.GetNamespace() != ns {
			t.Errorf("object in namespace %s, not the run's %s", m.GetNamespace(), ns)
		}
	}
	reps := max(len(p.Replicas), 1)
	if want := len(p.Implementations) * reps; deployments != want {
		t.Errorf("%d deployments, want %d (implementations x replicas)", deployments, want)
	}
	if want := p.Trials * len(p.Implementations) * reps * len(p.Workloads) * len(p.Load.Levels); jobs != want {
		t.Errorf("%d generator jobs, want %d", jobs, want)
	}
}

func equalResources(r corev1.ResourceRequirements) bool {
	for k, v := range r.Limits {
		if q, ok := r.Requests[k]; !ok || q.Cmp(v) != 0 {
			return false
		}
	}
	return len(r.Limits) == 2 && len(r.Requests) == 2
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n got: " + a + "\nwant: " + b
		}
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestSizing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		yaml   string
		pods   int // want pods, when accepted
		needed int // want needed pods, when refused
	}{
		// 10,000 req/s at 22 µs needs 0.22 CPU: one pod of 1 CPU.
		{"small open rate fits one pod", "load: {model: open, levels: [1000, 10000], duration: 5s}\n", 1, 0},
		// 100,000 req/s x 22 µs = 2.2 CPU / 0.7 = 3.14: four pods, sized unasked.
		{"100k req/s sized to four pods", "load: {model: open, levels: [100000], duration: 5s}\n", 4, 0},
		// Two pods asked for 100k: refused, four needed.
		{"too few pods refused", "load: {model: open, levels: [100000], duration: 5s}\ngenerator: {pods: 2}\n", 0, 4},
		// 1M req/s at 2 CPUs a pod: 22 / 1.4 = 15.7: 16 pods.
		{"1M req/s on 2-CPU pods", "load: {model: open, levels: [1000000], duration: 5s}\ngenerator: {cpu: 2}\n", 16, 0},
		// A slower scenario (60 µs/request) needs more pods: 9 for 100k.
		{"measured cost per request", "load: {model: open, levels: [100000], duration: 5s}\ngenerator: {pods: 8, us_per_request: 60}\n", 0, 9},
		// The closed model keeps the pods asked for.
		{"closed model keeps pods", "load: {model: closed, levels: [100], duration: 5s}\ngenerator: {pods: 3}\n", 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.ParsePlan("plan.yaml", []byte("name: s\nimplementations: [go-stdlib]\nworkloads: [string]\n"+tc.yaml), catalog, plan.MachineOf(2))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Size(p)
			var se *SizingError
			switch {
			case tc.needed > 0 && !errors.As(err, &se):
				t.Fatalf("got %v, want a sizing error", err)
			case tc.needed > 0:
				if se.Needed != tc.needed {
					t.Errorf("needed %d pods, want %d", se.Needed, tc.needed)
				}
				if !strings.Contains(se.Hint(), itoa(tc.needed)) {
					t.Errorf("hint %q does not name %d pods", se.Hint(), tc.needed)
				}
			case err != nil:
				t.Fatal(err)
			case s.Pods != tc.pods:
				t.Errorf("got %d pods, want %d", s.Pods, tc.pods)
			}
		})
	}
}

func TestClosedLevelBelowPods(t *testing.T) {
	p, err := plan.ParsePlan("plan.yaml", []byte("name: s\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [2, 10]}\ngenerator: {pods: 4}\n"), catalog, plan.MachineOf(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Size(p); err == nil || !strings.Contains(err.Error(), "2 users") {
		t.Errorf("got %v, want a refusal naming the 2-user level", err)
	}
}

func TestDNSLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"java-spring+vthreads-x1", "java-spring-vthreads-x1"}, // '+' is not allowed
		{"Go_Stdlib", "go-stdlib"},                             // lower case, '_' replaced
	} {
		if got := dnsLabel(tc.in, 63); got != tc.want {
			t.Errorf("dnsLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := strings.Repeat("a", 80)
	a, b := dnsLabel(long+"1", 52), dnsLabel(long+"2", 52)
	if len(a) > 52 || a == b {
		t.Errorf("long names: %q and %q: want two distinct labels of at most 52 characters", a, b)
	}
}

// TestRenderRefusesCores: a plan's cores pin local arms to CPUs; pods
// have none to pin, so Render says to scale with replicas.
func TestRenderRefusesCores(t *testing.T) {
	p, err := plan.ParsePlan("cores.yaml", []byte("name: c\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [10]}\nreplicas: [1]\n"), catalog, plan.MachineOf(2))
	if err != nil {
		t.Fatal(err)
	}
	p.Cores = []int{1, 2} // what a larger machine's plan would hold
	if _, err := Render(p, Options{}); err == nil || !strings.Contains(err.Error(), "replicas") {
		t.Errorf("Render with cores: got %v, want a refusal naming replicas", err)
	}
}

// TestRenderDatabaseSettings: a cluster that cannot pull the official
// images gets the database image and size it is told, and the defaults
// stay the official images at two CPUs and 2 GiB.
func TestRenderDatabaseSettings(t *testing.T) {
	p := loadPlan(t, filepath.Join("testdata", "k8s-closed-db.yaml"))
	cpu, err := ParseQuantity("--database-cpu", "500m")
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := ParseQuantity("--database-memory", "512Mi")
	for _, tc := range []struct {
		o               Options
		image, cpu, mem string
	}{
		{Options{}, PostgresImage, DatabaseCPU, DatabaseMemory},
		{Options{PostgresImage: "localhost/showdown/postgres:latest", DatabaseCPU: cpu, DatabaseMemory: mem}, "localhost/showdown/postgres:latest", "500m", "512Mi"},
	} {
		tc.o.Start, tc.o.RunID = start, "r1"
		m, err := Render(p, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, o := range m.Objects() {
			ss, ok := o.(*appsv1.StatefulSet)
			if !ok || ss.Name != "postgres" {
				continue
			}
			found = true
			c := ss.Spec.Template.Spec.Containers[0]
			if c.Image != tc.image {
				t.Errorf("postgres image %q, want %q", c.Image, tc.image)
			}
			if got := c.Resources.Limits.Cpu().String(); got != tc.cpu {
				t.Errorf("postgres CPU limit %s, want %s", got, tc.cpu)
			}
			if got := c.Resources.Requests.Memory().String(); got != tc.mem {
				t.Errorf("postgres memory request %s, want %s", got, tc.mem)
			}
		}
		if !found {
			t.Fatal("no postgres StatefulSet rendered")
		}
	}
	for _, bad := range []string{"0", "-1", "two"} {
		if _, err := ParseQuantity("--database-cpu", bad); err == nil {
			t.Errorf("--database-cpu %q accepted", bad)
		}
	}
}
