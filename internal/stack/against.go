package stack

import (
	"errors"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
)

// folderPlan is the plan `showdown run --against REV FOLDER` makes: a
// value, written as YAML by the encoder (every string quoted as YAML
// needs it) and read by the same parser as a plan file.
type folderPlan struct {
	Name            string         `yaml:"name"`
	Description     string         `yaml:"description"`
	Implementations []folderArm    `yaml:"implementations"`
	Workloads       []string       `yaml:"workloads"`
	Load            folderPlanLoad `yaml:"load"`
}

type folderArm struct {
	Path string `yaml:"path"`
}

type folderPlanLoad struct {
	Model  string `yaml:"model"`
	Levels []int  `yaml:"levels"`
	Warmup string `yaml:"warmup"`
}

// FolderAgainst makes and validates the plan of `showdown run --against
// REV FOLDER`: the folder's stack at REV (the baseline) and at the
// working tree, on its first workload (string where it serves it) at 50
// users, warmed until steady, with the defaults of a plan that names no
// stopping rule. A mistake is the folder's: its errors name the folder,
// without a line.
func FolderAgainst(root, folder, rev string, m plan.Machine) (*plan.Plan, []*service.Manifest, error) {
	abs, err := filepath.Abs(folder)
	if err != nil {
		return nil, nil, err
	}
	ms, err := service.Discover(root, abs)
	if err != nil {
		return nil, nil, err
	}
	sm, err := service.Find(ms, abs)
	if err != nil {
		return nil, nil, err
	}
	w := sm.Workloads[0]
	if slices.Contains(sm.Workloads, "string") {
		w = "string"
	}
	fp := folderPlan{
		Name:            sm.Name + "-against-" + plan.RevName(rev),
		Description:     sm.Name + " at the working tree against " + rev + ", on " + w + " at 50 users",
		Implementations: []folderArm{{Path: abs}},
		Workloads:       []string{w},
		Load:            folderPlanLoad{Model: "closed", Levels: []int{50}, Warmup: "auto"},
	}
	data, err := yaml.Marshal(fp)
	if err != nil {
		return nil, nil, err
	}
	// The plan is made here, as if beside the folder.
	file := filepath.Join(filepath.Dir(abs), fp.Name+".yaml")
	p, ms, err := ParsePlanAgainst(root, file, data, m, rev)
	var list plan.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			e.File, e.Line = folder, 0 // the plan is not a file: the folder's mistake
		}
	}
	return p, ms, err
}
