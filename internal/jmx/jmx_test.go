package jmx

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden imports every fixture and compares the scenario, the load and
// the lists, or the error, with testdata/NAME.golden.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jmx")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jmx")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			res, err := Import(f, data, Options{})
			var missing *MissingPropertiesError
			switch {
			case errors.As(err, &missing):
				got = "=== error\n" + err.Error() + "\nhint: " + missing.Hint() + "\n"
			case err != nil:
				t.Fatal(err)
			default:
				got = render(res, "testdata/"+name+".yaml")
			}
			golden := "testdata/" + name + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the import (go test -update rewrites it); got:\n%s", golden, got)
			}
		})
	}
}

// render prints a result the way the golden files hold it.
func render(res *Result, path string) string {
	var b strings.Builder
	b.WriteString("=== scenario\n")
	b.Write(res.Scenario)
	b.WriteString("=== load\n")
	b.Write(res.Load.YAML(path))
	b.WriteString("=== skipped\n")
	for _, p := range res.Skipped {
		b.WriteString(p.String() + "\n")
	}
	if len(res.Became) > 0 {
		b.WriteString("=== became\n")
		for _, p := range res.Became {
			b.WriteString(p.String() + "\n")
		}
	}
	b.WriteString("=== ignored\n")
	for _, p := range res.Ignored {
		b.WriteString(p.String() + "\n")
	}
	b.WriteString("=== notes\n")
	for _, n := range res.Notes {
		b.WriteString(n + "\n")
	}
	if len(res.Unset) > 0 {
		b.WriteString("=== unset\n")
		for _, u := range res.Unset {
			fmt.Fprintf(&b, "%s: --var %s (meanwhile %q)\n", u.Name, u.Var, u.Value)
		}
	}
	return b.String()
}

// TestMissingProperties imports a plan that reads properties with no
// default: where a constant is needed each must come from -J, and the
// error names them all; a property read only in a request becomes a
// scenario variable that attack --var sets.
func TestMissingProperties(t *testing.T) {
	data, err := os.ReadFile("testdata/properties.jmx")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		props   map[string]string
		missing []string // properties the error names, in order
	}{
		// None set: the server and the thread count need theirs.
		{"none", nil, []string{"NUM_USERS", "HOST", "PORT"}},
		// One left out.
		{"no port", map[string]string{"HOST": "127.0.0.1", "NUM_USERS": "3"}, []string{"PORT"}},
		// Every constant set: it translates; TOKEN is left to --var.
		{"all", map[string]string{"HOST": "127.0.0.1", "PORT": "8080", "NUM_USERS": "3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Import("testdata/properties.jmx", data, Options{Properties: tt.props})
			var mp *MissingPropertiesError
			if len(tt.missing) > 0 {
				if !errors.As(err, &mp) {
					t.Fatalf("got %v, want a MissingPropertiesError", err)
				}
				var names []string
				for _, p := range mp.Properties {
					names = append(names, p.Name)
					if want := "-J " + p.Name + "=VALUE"; !strings.Contains(err.Error(), want) {
						t.Errorf("the error lacks %q:\n%v", want, err)
					}
				}
				if got, want := strings.Join(names, " "), strings.Join(tt.missing, " "); got != want {
					t.Errorf("missing %q, want %q", got, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Load.Users != 3 || res.Load.Iterations != 5 {
				t.Errorf("load %d users x %d loops, want 3 x 5", res.Load.Users, res.Load.Iterations)
			}
			if len(res.Unset) != 1 || res.Unset[0] != (UnsetProperty{Name: "TOKEN", Var: "TOKEN", Value: "1"}) {
				t.Errorf("unset %+v, want TOKEN with JMeter's fallback 1", res.Unset)
			}
			for _, want := range []string{"base_url: http://127.0.0.1:8080", "X-Token: '{{TOKEN}}'", "set it with --var TOKEN=VALUE"} {
				if !strings.Contains(string(res.Scenario), want) {
					t.Errorf("scenario lacks %q:\n%s", want, res.Scenario)
				}
			}
		})
	}
}
