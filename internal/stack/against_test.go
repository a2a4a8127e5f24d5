package stack

import (
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/plan"
)

// The plan of run --against FOLDER is written by the YAML encoder, so a
// folder whose name YAML would read otherwise (quotes, a colon, a '#')
// reaches the parser as it is.
func TestFolderPlanQuotes(t *testing.T) {
	odd := `/tmp/our "svc": #1 'x'`
	data, err := yaml.Marshal(folderPlan{Name: "x-against-HEAD-1", Implementations: []folderArm{{Path: odd}}, Workloads: []string{"string"},
		Load: folderPlanLoad{Model: "closed", Levels: []int{50}, Warmup: "auto"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Folders("/tmp/x.yaml", data); !slices.Equal(got, []string{odd}) {
		t.Errorf("the plan's folders are %q, want %q:\n%s", got, odd, data)
	}
}
