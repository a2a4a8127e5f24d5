package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

func init() {
	register(&command{
		name:    "services",
		summary: "list the implementations (under services/ and from other folders) and check their manifests",
		run:     runServices,
	})
}

func runServices(st *state, args []string) error {
	fs := newFlagSet(st, "services", `[-knobs] [--plan FILE] [FOLDER...]

Lists the stacks under services/, and those from elsewhere that a plan
names by path (--plan) or that are given as folders (./our-service), with
the folder each comes from, and checks their manifests.`)
	knobs := fs.Bool("knobs", false, "also list each service's knobs with their defaults and help")
	planFile := fs.String("plan", "", "also list the stacks this plan names by folder (path:)")
	dirs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if !service.IsFolder(d) {
			return usageError{err: fmt.Errorf("unexpected argument %q", d), hint: "showdown services [-knobs] [--plan FILE] [FOLDER...]; a folder is written with a '/' or a leading '.' (./" + d + ")"}
		}
	}
	root, err := stack.Root(st.getenv)
	if err != nil {
		return err
	}
	if *planFile != "" {
		data, err := os.ReadFile(*planFile)
		if err != nil {
			return usageError{err: err, hint: "--plan names a plan file, e.g. plans/default.yaml"}
		}
		dirs = append(dirs, plan.Folders(*planFile, data)...)
	}
	ms, derr := service.Discover(root, dirs...)
	tw := tabwriter.NewWriter(st.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tLANGUAGE\tWORKLOADS\tBUILD\tKNOBS\tFOLDER")
	for _, m := range ms {
		build := "none"
		if len(m.BuildSteps) > 0 {
			build = "not built"
			if m.Cached() {
				build = "cached"
			}
		}
		kn := strings.Join(m.KnobNames(), ",")
		if kn == "" {
			kn = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Language, strings.Join(m.Workloads, ","), build, kn, m.Source(root))
	}
	tw.Flush()
	if *knobs {
		for _, m := range ms {
			if len(m.Knobs) == 0 {
				continue
			}
			fmt.Fprintf(st.stdout, "\n%s knobs:\n", m.Name)
			for _, k := range m.KnobNames() {
				kn := m.Knobs[k]
				def := kn.Default
				if def == "" {
					def = "(unset)"
				}
				fmt.Fprintf(st.stdout, "  %s=%s\n      %s\n", k, def, kn.Help)
			}
		}
	}
	if derr != nil {
		fmt.Fprintln(st.stderr, derr)
		var h interface{ Hint() string }
		if errors.As(derr, &h) {
			fmt.Fprintf(st.stderr, "hint: %s\n", h.Hint())
		}
		return exitError{code: exitFailure, err: errors.New("some manifests are invalid")}
	}
	if len(ms) == 0 {
		return fmt.Errorf("no manifest under %s/services/*/%s", root, service.ManifestFile)
	}
	return nil
}

// discover reads the manifests under root's services/ and, when name is
// a folder (./our-service), that folder's; folder says whether it is.
func discover(root, name string) (all []*service.Manifest, folder bool, derr error) {
	var dirs []string
	if service.IsFolder(name) {
		dirs = append(dirs, name)
	}
	all, derr = service.Discover(root, dirs...)
	return all, len(dirs) > 0, derr
}

// findService is the stack a --service names among all (what discover
// read; derr its problems): a folder's own problems come first, located
// with their hint; an unknown name says how to list the stacks. up and
// verify look a stack up through it.
func findService(all []*service.Manifest, name string, folder bool, derr error) (*service.Manifest, error) {
	m, err := service.Find(all, name)
	switch {
	case err == nil:
		return m, nil
	case derr != nil && folder:
		return nil, derr
	case derr != nil:
		return nil, fmt.Errorf("%w\n%v", err, derr)
	}
	return nil, usageError{err: err, hint: hintOf(err, "run 'showdown services' for the list")}
}

// notServed is the usage error of asking m for a workload it does not
// serve.
func notServed(m *service.Manifest, w string) error {
	return usageError{err: fmt.Errorf("%s does not serve workload %s", m.Name, w), hint: m.Name + " serves " + strings.Join(m.Workloads, ", ")}
}
