package located

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestFromYAML(t *testing.T) {
	var v struct {
		N int `yaml:"n"`
	}
	tests := []struct {
		name string
		text string
		into any
		want []string
	}{
		// A syntax error keeps its line and gets the syntax hint.
		{"syntax", "a: b\n  c: d\n", &yaml.Node{}, []string{"f.yaml:2: invalid YAML: mapping values are not allowed in this context (hint: " + SyntaxHint + ")"}},
		// Every type error is a problem of its own, with its line.
		{"types", "n: x\n", &v, []string{"f.yaml:1: cannot unmarshal !!str `x` into int"}},
	}
	for _, tt := range tests {
		err := yaml.Unmarshal([]byte(tt.text), tt.into)
		if err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		got := FromYAML("f.yaml", err)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %d problems %v, want %d", tt.name, len(got), got, len(tt.want))
		}
		for i := range got {
			if got[i].Error() != tt.want[i] {
				t.Errorf("%s: got %q, want %q", tt.name, got[i].Error(), tt.want[i])
			}
		}
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "p.yaml", Msg: "empty"}, "p.yaml: empty"},                                                       // no position
		{Error{File: "p.yaml", Line: 3, Field: "load.levels", Msg: "no levels"}, "p.yaml:3: load.levels: no levels"}, // line and field
		{Error{File: "s.yaml", Line: 2, Col: 5, Msg: "bad", Hint: "fix it"}, "s.yaml:2:5: bad (hint: fix it)"},       // column and hint
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
	l := List{{File: "a", Line: 9}, {File: "a", Line: 2, Col: 4}, {File: "a", Line: 2, Col: 1}}
	l.Sort()
	if l[0].Col != 1 || l[1].Col != 4 || l[2].Line != 9 {
		t.Errorf("Sort: got %v", l)
	}
}

func TestClosest(t *testing.T) {
	fields := []string{"name", "steps", "think_time", "workloads"}
	for _, tt := range []struct {
		s, want string
	}{
		{"nmae", "name"},             // a swap: two edits
		{"Steps", "steps"},           // case does not count
		{"think-time", "think_time"}, // one edit
		{"workload", "workloads"},    // one missing letter
		{"wrkloadz", "workloads"},    // three edits of nine letters: len/3
		{"xyz", ""},                  // nothing near
		{"", ""},                     // nothing typed
	} {
		if got := Closest(tt.s, fields); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	// Runes, not bytes: one edit in a name with an accent.
	if got := editDistance("café", "cafe"); got != 1 {
		t.Errorf("editDistance(café, cafe) = %d, want 1", got)
	}
}
