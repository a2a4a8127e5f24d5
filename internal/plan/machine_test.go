package plan

import (
	"slices"
	"strings"
	"testing"
)

func TestParseMachine(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []int  // nil: an error
		err  string // part of the error
	}{
		{"2", []int{0, 1}, ""},           // a count
		{"16", MachineOf(16).CPUs, ""},   // the device machine
		{"0-15", MachineOf(16).CPUs, ""}, // the same as a list
		{"2-3", []int{2, 3}, ""},         // as under taskset -c 2-3
		{"5,1-2,2", []int{1, 2, 5}, ""},  // sorted, repeats dropped
		{"5-5", []int{5}, ""},            // one CPU, as a list
		{"0", nil, "1 to 4096"},          // no CPUs
		{"sixteen", nil, "neither a CPU count nor a CPU list"},
		{"3-1", nil, "neither a CPU count nor a CPU list"},
	} {
		m, err := ParseMachine(tt.in)
		if tt.want == nil {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseMachine(%q) = %v, %v; want an error with %q", tt.in, m, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(m.CPUs, tt.want) {
			t.Errorf("ParseMachine(%q) = %v, %v; want %v", tt.in, m.CPUs, err, tt.want)
		}
	}
}

// TestPlacementOfMachine: the default placement is the machine's: the
// service on its first CPU, the generator and databases on the rest.
func TestPlacementOfMachine(t *testing.T) {
	const text = "name: m\nimplementations: [go-stdlib]\nworkloads: [string]\nload: {levels: [10]}\n"
	for _, tt := range []struct {
		m    Machine
		want Placement
	}{
		{MachineOf(2), Placement{"0", "1", "1"}},
		{MachineOf(16), Placement{"0", "1-15", "1-15"}},
		{Machine{CPUs: []int{2, 3}}, Placement{"2", "3", "3"}}, // taskset -c 2-3
		{MachineOf(1), Placement{}},                            // one CPU: shared
	} {
		p, err := ParsePlan("m.yaml", []byte(text), testCatalog, tt.m)
		if err != nil {
			t.Fatal(err)
		}
		if p.Placement != tt.want {
			t.Errorf("on CPUs %s: placement %+v, want %+v", tt.m, p.Placement, tt.want)
		}
	}
	// A CPU list of another machine is refused, naming this one's CPUs.
	_, err := ParsePlan("m.yaml", []byte(text+"placement: {service_cpus: \"0\"}\n"), testCatalog, Machine{CPUs: []int{2, 3}})
	if err == nil || !strings.Contains(err.Error(), "CPU 0 does not exist (hint: the machine has CPUs 2-3)") {
		t.Errorf("CPU 0 on CPUs 2-3: got %v", err)
	}
}
