package jmx

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/scenario"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/load"
	"gopkg.in/yaml.v3"
)

// jmeterRun is one fixture of the JMeter check, with the properties both
// tools get (JMeter as -J, the importer as Options.Properties).
type jmeterRun struct {
	fixture string
	props   map[string]string
	// timed: the thread group runs for a duration, so its sample count
	// measures each tool's speed on this machine (JMeter's JVM starts
	// cold): only the errors are compared.
	timed bool
}

var jmeterRuns = []jmeterRun{
	// The string plan at 100 threads x 200 loops (the source's 10,000
	// loops take minutes in each tool on two cores).
	{"string.jmx", map[string]string{"loops": "200"}, false},
	{"duration.jmx", nil, true},
	{"bank.jmx", nil, false},
	{"bank-2018.jmx", nil, false},
	{"csv.jmx", nil, false},
	{"users.jmx", nil, false},
}

// TestJMeterAgreement runs each fixture in JMeter 5 and its import with
// the load engine, against go-stdlib on a private PostgreSQL, and compares
// the sample count and error count of every sampler. It takes minutes and
// fetches JMeter from Maven Central, so it runs only when SHOWDOWN_JMETER=1
// (bench/jmeter/run.sh sets it).
func TestJMeterAgreement(t *testing.T) {
	if os.Getenv("SHOWDOWN_JMETER") != "1" {
		t.Skip("runs JMeter 5 (fetched with Maven) for minutes; bench/jmeter/run.sh runs it (SHOWDOWN_JMETER=1)")
	}
	for _, tool := range []string{"mvn", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the check needs Maven to fetch JMeter and Java to run it", tool)
		}
	}
	ctx := context.Background()
	root, err := service.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	jar := fetchJMeter(t, root)
	pg, err := db.StartPostgres(ctx)
	var missing *db.MissingError
	if errors.As(err, &missing) {
		t.Skipf("PostgreSQL absent: %v (%s)", err, missing.Hint())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	servers := db.Servers{Postgres: pg}
	for _, w := range []string{"bank", "users"} {
		if _, err := db.Prepare(ctx, w, servers, db.PrepareOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	m := manifest(t, root, "go-stdlib")
	if _, err := m.Build(ctx, io.Discard); err != nil {
		t.Fatal(err)
	}
	inst, err := service.Start(ctx, m, service.StartOptions{Env: map[string]string{"DATABASE_URL": pg.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Stop(5 * time.Second)
	if _, err := inst.WaitHealthy(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	port := inst.URL()[strings.LastIndexByte(inst.URL(), ':')+1:]
	reset := func() {
		for _, w := range []string{"bank", "users"} {
			if err := db.Reset(ctx, w, servers); err != nil {
				t.Fatal(err)
			}
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| plan | sampler | JMeter samples | showdown samples | JMeter errors | showdown errors |\n|---|---|---|---|---|---|\n")
	for _, r := range jmeterRuns {
		t.Run(strings.TrimSuffix(r.fixture, ".jmx"), func(t *testing.T) {
			plan := filepath.Join("testdata", r.fixture)
			reset()
			jm := runJMeter(t, jar, plan, port, r.props)
			reset()
			sd := runImported(t, plan, inst.URL(), r.props)
			labels := map[string]bool{}
			for l := range jm {
				labels[l] = true
			}
			for l := range sd {
				labels[l] = true
			}
			names := make([]string, 0, len(labels))
			for l := range labels {
				names = append(names, l)
			}
			sort.Strings(names)
			for _, l := range names {
				j, s := jm[l], sd[l]
				fmt.Fprintf(&table, "| %s | %s | %d | %d | %d | %d |\n", r.fixture, l, j.samples, s.samples, j.errors, s.errors)
				if s.setup {
					continue // setUp samples: JMeter counts them, the engine runs them before the load
				}
				switch {
				case j.errors != s.errors && !r.timed:
					t.Errorf("%s: JMeter %d errors, showdown %d", l, j.errors, s.errors)
				case r.timed && (j.errors > 0) != (s.errors > 0):
					t.Errorf("%s: JMeter %d errors, showdown %d", l, j.errors, s.errors)
				case !r.timed && j.samples != s.samples:
					t.Errorf("%s: JMeter %d samples, showdown %d", l, j.samples, s.samples)
				}
			}
		})
	}
	t.Logf("go-stdlib at %s, JMeter %s\n%s", inst.URL(), filepath.Base(jar), table.String())
}

// counts are one sampler's samples and errors.
type counts struct {
	samples, errors int64
	setup           bool
}

// fetchJMeter lays out JMeter with the Maven plugin and returns its jar.
func fetchJMeter(t *testing.T, root string) string {
	dir := filepath.Join(root, "bench", "jmeter")
	cmd := exec.Command("mvn", "-B", "-q", "jmeter:configure")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mvn jmeter:configure: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "target", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Configurations []struct {
			JMeterDirectoryPath string `json:"jmeterDirectoryPath"`
			RuntimeJarName      string `json:"runtimeJarName"`
		} `json:"configurations"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil || len(cfg.Configurations) == 0 {
		t.Fatalf("target/config.json: %v", err)
	}
	c := cfg.Configurations[0]
	return filepath.Join(c.JMeterDirectoryPath, "bin", c.RuntimeJarName)
}

func manifest(t *testing.T, root, name string) *service.Manifest {
	ms, err := service.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("service %s not found", name)
	return nil
}

// runJMeter runs plan in non-GUI mode and counts its CSV results by label.
func runJMeter(t *testing.T, jar, plan, port string, props map[string]string) map[string]counts {
	dir := t.TempDir()
	abs, _ := filepath.Abs(plan)
	out := filepath.Join(dir, "results.csv")
	args := []string{"-jar", jar, "-n", "-t", abs, "-l", out, "-j", filepath.Join(dir, "jmeter.log"),
		"-Jhost=127.0.0.1", "-Jport=" + port, "-Jjmeter.save.saveservice.output_format=csv"}
	for k, v := range props {
		args = append(args, "-J"+k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jmeter: %v\n%s", err, b)
	}
	t.Logf("JMeter ran %s in %s", plan, time.Since(start).Round(time.Second))
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v", out, err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	res := map[string]counts{}
	for _, row := range rows[1:] {
		c := res[row[col["label"]]]
		c.samples++
		if row[col["success"]] != "true" {
			c.errors++
		}
		res[row[col["label"]]] = c
	}
	return res
}

// runImported imports plan and runs it with the load engine at the same
// load.
func runImported(t *testing.T, plan, baseURL string, props map[string]string) map[string]counts {
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plan.yaml")
	res, err := Import(plan, data, Options{ScenarioPath: path, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, res.Scenario, 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(path, scenario.Options{BaseURL: baseURL, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.RunSetup(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	l := res.Load
	r, err := load.NewAttacker().Attack(context.Background(), sc,
		load.ClosedModel{Users: l.Users, RampUp: l.RampUp, Iterations: l.Iterations, Duration: l.Duration})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]counts{}
	for _, row := range r.Summary.Labels {
		out[row.Label] = counts{samples: row.Samples, errors: row.Errors}
	}
	// The setup section's steps ran once each, uncounted by the engine.
	var doc struct {
		Setup []struct {
			Name string `yaml:"name"`
		} `yaml:"setup"`
	}
	_ = yaml.Unmarshal(res.Scenario, &doc)
	for _, s := range doc.Setup {
		out[s.Name] = counts{samples: 1, setup: true}
	}
	return out
}
