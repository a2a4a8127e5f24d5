package plan

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestPlaceCores(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cores    []int
		cpus     int
		database bool
		want     Placement
		gen, db  int
		notes    int // how many shortfalls are noted
	}{
		// This machine: one service CPU, the generator and databases
		// share the other (as the default placement does), both short of
		// the rule and said so.
		{"2 CPUs, cores 1, bank", []int{1}, 2, true, Placement{"0", "1", "1"}, 1, 0, 2},
		// No database to place: only the generator's shortfall.
		{"2 CPUs, cores 1, string", []int{1}, 2, false, Placement{"0", "1", "1"}, 1, 0, 1},
		// Four CPUs, cores 1 and 2: two service CPUs, two generator CPUs
		// (the minimum), no room for the databases apart.
		{"4 CPUs, cores 1-2", []int{1, 2}, 4, true, Placement{"0-1", "2-3", "2-3"}, 2, 0, 2},
		// Four CPUs, cores 1: the generator gets its two, the database
		// the last CPU.
		{"4 CPUs, cores 1, bank", []int{1}, 4, true, Placement{"0", "1-2", "3"}, 2, 1, 0},
		// Eight CPUs, cores 1, 2, 4 on string: four and four.
		{"8 CPUs, cores 4", []int{1, 2, 4}, 8, false, Placement{"0-3", "4-7", "4-7"}, 4, 0, 1},
		// Eight CPUs, cores 2 on bank: four generator CPUs, one database
		// CPU, the one left over to the generator.
		{"8 CPUs, cores 2, bank", []int{2}, 8, true, Placement{"0-1", "2-6", "7"}, 5, 1, 0},
		// The device machine: cores 8 on string leaves the generator its
		// minimum, eight CPUs.
		{"16 CPUs, cores 8", []int{1, 2, 4, 8}, 16, false, Placement{"0-7", "8-15", "8-15"}, 8, 0, 1},
		// The device machine: cores 4 on bank, the rule in full (8
		// generator, 2 database) and two CPUs over for the generator.
		{"16 CPUs, cores 4, bank", []int{4, 1}, 16, true, Placement{"0-3", "4-13", "14-15"}, 10, 2, 0},
		// 64 CPUs, cores 16 on bank: 32 generator, 8 database, the rest
		// to the generator.
		{"64 CPUs, cores 16, bank", []int{16}, 64, true, Placement{"0-15", "16-55", "56-63"}, 40, 8, 0},
		// 64 CPUs, cores 32: the minimum generator, databases sharing.
		{"64 CPUs, cores 32, bank", []int{8, 32}, 64, true, Placement{"0-31", "32-63", "32-63"}, 32, 0, 2},
	} {
		cp, err := PlaceCores(tt.cores, MachineOf(tt.cpus), tt.database)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if cp.Placement != tt.want || cp.Generator != tt.gen || cp.Database != tt.db || len(cp.Notes) != tt.notes {
			t.Errorf("%s: got %+v (generator %d, database %d, notes %q); want %+v, %d, %d, %d notes",
				tt.name, cp.Placement, cp.Generator, cp.Database, cp.Notes, tt.want, tt.gen, tt.db, tt.notes)
		}
	}
}

func TestPlaceCoresRefuses(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cores    []int
		cpus     int
		database bool
		want     string
	}{
		// This machine cannot give cores 2 a generator of two CPUs.
		{"2 CPUs, cores 2", []int{1, 2}, 2, true, "cores 2 needs 2 service + 2 generator CPUs at least (4 generator CPUs keep the generator under half of them, and 1 database CPUs apart from both); the machine has 2"},
		// Nor cores 4, on string: no database in the message.
		{"2 CPUs, cores 4", []int{4}, 2, false, "cores 4 needs 4 service + 4 generator CPUs at least (8 generator CPUs keep the generator under half of them); the machine has 2"},
		// The device machine stops at 8.
		{"16 CPUs, cores 16", []int{1, 16}, 16, true, "cores 16 needs 16 service + 16 generator CPUs at least (32 generator CPUs keep the generator under half of them, and 8 database CPUs apart from both); the machine has 16"},
		// One odd CPU short.
		{"7 CPUs, cores 4", []int{4}, 7, false, "cores 4 needs 4 service + 4 generator CPUs at least"},
	} {
		_, err := PlaceCores(tt.cores, MachineOf(tt.cpus), tt.database)
		var ce *CoresError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestCoreCPUs(t *testing.T) {
	for n, want := range map[int]string{1: "0", 2: "0-1", 8: "0-7"} {
		if got := MachineOf(16).CoreCPUs(n); got != want {
			t.Errorf("CoreCPUs(%d) = %q, want %q", n, got, want)
		}
	}
	// Under taskset -c 2-5 the first CPUs are 2 and 3.
	if got := (Machine{CPUs: []int{2, 3, 4, 5}}).CoreCPUs(2); got != "2-3" {
		t.Errorf("CoreCPUs(2) on CPUs 2-5 = %q, want 2-3", got)
	}
}

// TestPlaceCoresOnSomeCPUs: a lab started under taskset -c 2-5 places
// everything on CPUs 2-5, never on 0 or 1.
func TestPlaceCoresOnSomeCPUs(t *testing.T) {
	cp, err := PlaceCores([]int{1}, Machine{CPUs: []int{2, 3, 4, 5}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Placement{"2", "3-4", "5"}); cp.Placement != want {
		t.Errorf("placement %+v, want %+v", cp.Placement, want)
	}
	// CPUs apart: the generator's two are not a range.
	cp, err = PlaceCores([]int{1}, Machine{CPUs: []int{0, 2, 4}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Placement{"0", "2,4", "2,4"}); cp.Placement != want {
		t.Errorf("placement %+v, want %+v", cp.Placement, want)
	}
}

func TestCoresArms(t *testing.T) {
	p, err := ParsePlan("c.yaml", []byte("name: c\nimplementations: [go-stdlib, java-spring]\nworkloads: [string]\nload: {levels: [50]}\ncores: [1]\naa: true\n"), testCatalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, im := range p.Arms() {
		ids = append(ids, im.ID())
	}
	// Each implementation at each count, and the A/A twin of the first
	// at the first count.
	if want := []string{"go-stdlib@1", "java-spring@1", "go-stdlib+aa@1"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("arms %v, want %v", ids, want)
	}
	if got := p.Arms()[0].BaseID(); got != "go-stdlib" {
		t.Errorf("BaseID %q", got)
	}
	if p.Placement.ServiceCPUs != "0" || p.Placement.GeneratorCPUs == "" {
		t.Errorf("placement %+v: want the service on CPU 0 and a generator's CPUs", p.Placement)
	}
	// Two counts of one implementation are two arms: interleaved.
	p.Cores = []int{1, 2}
	p.Implementations = p.Implementations[:1]
	p.Rounds.AA = false
	ids = nil
	for _, im := range p.Arms() {
		ids = append(ids, im.ID())
	}
	if want := []string{"go-stdlib@1", "go-stdlib@2"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("arms %v, want %v", ids, want)
	}
	if ok, why := p.Interleaved(); !ok {
		t.Errorf("one implementation at two core counts is not interleaved: %s", why)
	}
}

func TestCoresErrors(t *testing.T) {
	const head = "name: c\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [50]}\n"
	for _, tt := range []struct {
		name string
		plan string
		want []string // "line: field: message" prefixes, in order
	}{
		// A count beyond any machine: refused, naming what is missing.
		{"too many", head + "cores: [1, 4096]\n", []string{"5: cores: cores 4096 needs 4096 service + 4096 generator CPUs at least"}},
		// Zero, and a count twice.
		{"bad counts", head + "cores: [0, 1, 1]\n", []string{"5: cores.0: cores 0 must be between 1 and 4096", "5: cores.2: 1 is listed twice"}},
		// cores sets the service's CPUs and quota: the plan may not.
		{"service_cpus and cpu", head + "cores: [1]\nplacement: {service_cpus: \"0\"}\nlimits: {cpu: 1}\n",
			[]string{"6: placement.service_cpus: cores and placement.service_cpus exclude each other", "7: limits.cpu: cores and limits.cpu exclude each other"}},
		// A generator CPU among the service's.
		{"generator on a service CPU", head + "cores: [1]\nplacement: {generator_cpus: \"0\"}\n",
			[]string{"6: placement.generator_cpus: CPU 0 is a service CPU at cores 1"}},
		// Cores 2 on this two-CPU machine: refused, saying what fits.
		{"too many here", head + "cores: [2]\n", []string{"5: cores: cores 2 needs 2 service + 2 generator CPUs at least"}},
	} {
		_, err := ParsePlan("p.yaml", []byte(tt.plan), testCatalog, testMachine)
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("%s: err = %v, want an ErrorList", tt.name, err)
			continue
		}
		if len(list) != len(tt.want) {
			t.Errorf("%s: got %d errors, want %d:\n%v", tt.name, len(list), len(tt.want), err)
			continue
		}
		for i, w := range tt.want {
			if got := strings.TrimPrefix(list[i].Error(), "p.yaml:"); !strings.HasPrefix(got, w) {
				t.Errorf("%s: error %d = %q, want prefix %q", tt.name, i, got, w)
			}
		}
	}
}
