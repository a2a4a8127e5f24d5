package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A stack from a folder is named by path, relative to the plan's folder;
// it is the folder's stack, never the one of the same name under
// services/.
func TestParsePlanPath(t *testing.T) {
	catalog := Catalog{
		"go-stdlib":          {"string", "bank"},
		"our-service":        {"string"},
		"/ours/our-service":  {"string"},
		"/plans/same/go-std": {"string"},
	}
	const file = "/plans/p.yaml"
	text := "name: p\nimplementations:\n  - go-stdlib\n  - path: ../ours/our-service\n    variant: v\nworkloads: [string]\nload: {levels: [1]}\n"
	p, err := ParsePlan(file, []byte(text), catalog, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	im := p.Implementations[1]
	if im.Service != "our-service" || im.Dir != "/ours/our-service" || im.ID() != "our-service+v" {
		t.Errorf("implementation = %+v, want our-service from /ours/our-service", im)
	}
	if got, want := p.Folders(), []string{"/ours/our-service"}; !slices.Equal(got, want) {
		t.Errorf("Folders() = %v, want %v", got, want)
	}
	if got, want := Folders(file, []byte(text)), []string{"/ours/our-service"}; !slices.Equal(got, want) {
		t.Errorf("Folders(text) = %v, want %v", got, want)
	}

	tests := []struct {
		name string
		impl string // the second implementation's lines
		work string
		want []string // prefixes after "file:"
	}{
		// A folder the catalog has no stack for.
		{"no stack", "  - path: ../nothing\n", "string", []string{"4: implementations.1.path: no stack in ../nothing (/nothing)"}},
		// A folder named like a stack of services/ is still only a folder.
		{"named like services'", "  - path: go-stdlib\n", "string", []string{"4: implementations.1.path: no stack in go-stdlib (/plans/go-stdlib)", "4: implementations.1: go-stdlib appears twice"}},
		// path and service at once.
		{"both", "  - {path: ../ours/our-service, service: our-service}\n", "string", []string{"4: implementations.1.path: path and service exclude each other"}},
		// An empty path.
		{"empty", "  - path: \"\"\n", "string", []string{"4: implementations.1.path: path is empty"}},
		// A workload the folder's stack does not serve.
		{"workload", "  - path: ../ours/our-service\n", "bank", []string{"5: workloads.0: our-service does not implement workload bank"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := "name: p\nimplementations:\n  - go-stdlib\n" + tc.impl + "workloads: [" + tc.work + "]\nload: {levels: [1]}\n"
			_, err := ParsePlan(file, []byte(text), catalog, testMachine)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("err = %v, want an ErrorList", err)
			}
			if len(list) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(list), len(tc.want), err)
			}
			for i, w := range tc.want {
				if got := strings.TrimPrefix(list[i].Error(), file+":"); !strings.HasPrefix(got, w) {
					t.Errorf("error %d = %q, want prefix %q", i, got, w)
				}
			}
		})
	}
}
