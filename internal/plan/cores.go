package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/showdownlab/showdown/internal/cpulist"
)

// GeneratorPerServiceCPU is how many generator CPUs a plan's cores want
// per service CPU. The generator spends about as much CPU per request as
// the fastest stack (rust-axum) does serving it: 17-22 µs a request for
// the engine (bench/README.md) against rust-axum's 8 µs at 128k req/s on
// one CPU of the 16-CPU machine, and about the same on this 2-CPU one.
// So n saturated service CPUs keep about n generator CPUs busy; twice as
// many keep the generator under about half of its CPUs, where its
// lateness stays far below a service's latency.
const GeneratorPerServiceCPU = 2

// CoreCPUs is the service's CPU list at n cores: the machine's first n
// CPUs ("0", "0-3"; "2-3" for 2 cores under taskset -c 2-5). On a
// machine of fewer than n CPUs, which validation refuses, it is 0..n-1.
func (m Machine) CoreCPUs(n int) string {
	n = max(n, 1)
	if n > len(m.CPUs) {
		return cpulist.Format(MachineOf(n).CPUs)
	}
	return m.span(0, n-1)
}

// CoreCPUs is the service's CPU list at n cores on the plan's machine
// (Machine.CoreCPUs).
func (p *Plan) CoreCPUs(n int) string { return p.machine.CoreCPUs(n) }

// CoresPlacement is the placement a plan's cores get on a machine: the
// service on the machine's first M CPUs for the largest count M (each
// arm on its own first n), the generator on the next CPUs, the databases
// on the last.
type CoresPlacement struct {
	Placement
	// Generator and Database are how many CPUs each got; Database is 0
	// when the databases share the generator's.
	Generator, Database int
	// Notes say where the machine fell short of the rule: a generator
	// with fewer CPUs than it wants, databases sharing its CPUs.
	Notes []string
}

// CoresError is a plan's cores that do not fit the machine, saying what
// is missing.
type CoresError struct {
	Cores, MachineCPUs int
	Database           bool
}

func (e *CoresError) Error() string {
	want := GeneratorPerServiceCPU * e.Cores
	db := ""
	if e.Database {
		db = fmt.Sprintf(", and %d database CPUs apart from both", databaseWant(e.Cores))
	}
	return fmt.Sprintf("cores %d needs %d service + %d generator CPUs at least (%d generator CPUs keep the generator under half of them%s); the machine has %d",
		e.Cores, e.Cores, e.Cores, want, db, e.MachineCPUs)
}

// databaseWant is how many CPUs the databases want apart at m service
// CPUs: half as many, at least one. A starting point, not a measured
// ratio: the databases' CPU is sampled in every level beside the
// service's, so a database short of CPUs shows there.
func databaseWant(m int) int { return max(1, m/2) }

// PlaceCores derives the placement of a plan with cores on machine m;
// database is whether the plan's workloads start a database. The service
// takes the machine's first M CPUs for the largest count M. The
// generator needs at least M CPUs (fewer, and the fastest stack would
// measure the generator) and wants GeneratorPerServiceCPU×M; it gets them
// first. The databases then get databaseWant(M) CPUs apart where the
// machine allows, else they share the generator's; CPUs left over go to
// the generator. It refuses (a *CoresError) when the machine has fewer
// than 2M CPUs.
func PlaceCores(cores []int, machine Machine, database bool) (CoresPlacement, error) {
	m, machineCPUs := slices.Max(cores), len(machine.CPUs)
	if machineCPUs < 2*m {
		return CoresPlacement{}, &CoresError{Cores: m, MachineCPUs: machineCPUs, Database: database}
	}
	spare := machineCPUs - 2*m
	gen := m + min(spare, (GeneratorPerServiceCPU-1)*m)
	spare = machineCPUs - m - gen
	db := 0
	if database {
		db = min(spare, databaseWant(m))
	}
	gen = machineCPUs - m - db // what is left over goes to the generator
	cp := CoresPlacement{Generator: gen, Database: db}
	cp.ServiceCPUs = machine.CoreCPUs(m)
	cp.GeneratorCPUs = machine.span(m, m+gen-1)
	cp.DatabaseCPUs = cp.GeneratorCPUs
	if db > 0 {
		cp.DatabaseCPUs = machine.span(m+gen, machineCPUs-1)
	}
	if want := GeneratorPerServiceCPU * m; gen < want {
		cp.Notes = append(cp.Notes, fmt.Sprintf("the generator has %d CPUs (%s), fewer than the %d that keep it under half of them at the fastest stacks' rates; its CPU is recorded with every round", gen, cp.GeneratorCPUs, want))
	}
	if database && db == 0 {
		cp.Notes = append(cp.Notes, fmt.Sprintf("the databases share the generator's CPUs (%s): this machine has none left for them apart", cp.GeneratorCPUs))
	}
	return cp, nil
}

// CoresLabel writes core counts as the plan does: "1, 2, 4".
func CoresLabel(cores []int) string {
	parts := make([]string, len(cores))
	for i, n := range cores {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// PlaceCores is the placement of the plan's cores on its machine
// (PlaceCores, with a database when a workload needs one).
func (p *Plan) PlaceCores() (CoresPlacement, error) {
	db := slices.ContainsFunc(p.Workloads, Workload.HasDatabase)
	return PlaceCores(p.Cores, p.machine, db)
}

// applyCores sets the placement a plan with cores runs with: the service
// CPUs of its largest count, and the generator's and databases' derived
// ones unless the plan names them. Validation reports a machine too small.
func (p *Plan) applyCores() {
	if slices.ContainsFunc(p.Cores, func(n int) bool { return n < 1 }) {
		return
	}
	cp, err := p.PlaceCores()
	if err != nil {
		return
	}
	pl := Placement{ServiceCPUs: cp.ServiceCPUs, GeneratorCPUs: p.Placement.GeneratorCPUs, DatabaseCPUs: p.Placement.DatabaseCPUs}
	if pl.GeneratorCPUs == "" {
		pl.GeneratorCPUs = cp.GeneratorCPUs
	}
	if pl.DatabaseCPUs == "" {
		pl.DatabaseCPUs = cp.DatabaseCPUs
	}
	p.Placement = pl
}

// validateCores checks the plan's core counts, that the machine has the
// CPUs they need, and that the plan leaves the service's CPUs and quota
// to them.
func (p *Plan) validateCores(add func(path []string, hint, format string, args ...any)) {
	if len(p.Cores) == 0 {
		return
	}
	seen := map[int]bool{}
	ok := true
	for i, n := range p.Cores {
		path := []string{"cores", strconv.Itoa(i)}
		switch {
		case n < 1 || n > 4096:
			add(path, "e.g. cores: [1, 2, 4]", "cores %d must be between 1 and 4096", n)
			ok = false
		case seen[n]:
			add(path, "each count once: cores: [1, 2, 4]", "%d is listed twice", n)
		}
		seen[n] = true
	}
	if p.has("placement", "service_cpus") {
		add([]string{"placement", "service_cpus"}, "remove it: cores pins each arm to the machine's first n CPUs", "cores and placement.service_cpus exclude each other")
	}
	if p.has("limits", "cpu") {
		add([]string{"limits", "cpu"}, "remove it: cores gives each arm n whole CPUs, pinned, with no quota", "cores and limits.cpu exclude each other")
	}
	if !ok {
		return
	}
	if _, err := p.PlaceCores(); err != nil {
		add([]string{"cores"}, fmt.Sprintf("on a machine of %d CPUs (%s) cores up to %d fit; the placement rule is in plans/README.md", len(p.machine.CPUs), p.machine, len(p.machine.CPUs)/2), "%v", err)
		return
	}
	m := slices.Max(p.Cores)
	service := p.machine.CPUs[:m]
	for _, f := range []struct{ name, v string }{{"generator_cpus", p.Placement.GeneratorCPUs}, {"database_cpus", p.Placement.DatabaseCPUs}} {
		if !p.has("placement", f.name) {
			continue
		}
		cpus, _ := cpulist.Parse(f.v)
		for _, c := range cpus {
			if slices.Contains(service, c) {
				add([]string{"placement", f.name}, fmt.Sprintf("other CPUs than %s: cores %d takes them", p.machine.CoreCPUs(m), m), "CPU %d is a service CPU at cores %d", c, m)
				break
			}
		}
	}
}
