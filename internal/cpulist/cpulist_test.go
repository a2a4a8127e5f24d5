package cpulist

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int // nil: an error
	}{
		{"0", []int{0}},               // one CPU
		{"1-3", []int{1, 2, 3}},       // a range
		{"0,2", []int{0, 2}},          // a list
		{" 0 , 2-3 ", []int{0, 2, 3}}, // spaces around parts
		{"3-1", nil},                  // a range backwards
		{"a", nil},                    // not a number
		{"-1", nil},                   // no negative CPU
		{"", nil},                     // nothing
	} {
		got, err := Parse(tc.in)
		if tc.want == nil {
			if err == nil {
				t.Errorf("Parse(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	if err := Check("0-1", []int{0, 1}); err != nil {
		t.Errorf("0-1 on CPUs 0-1: %v", err)
	}
	if err := Check("0-2", []int{0, 1}); err == nil || !strings.Contains(err.Error(), "CPU 2 does not exist") {
		t.Errorf("0-2 on CPUs 0-1: got %v, want CPU 2 named", err)
	}
	if err := Check("0-5", []int{0, 1}); err == nil || !strings.Contains(err.Error(), "CPUs 2-5 do not exist") {
		t.Errorf("0-5 on CPUs 0-1: got %v, want CPUs 2-5 named", err)
	}
	// Under taskset -c 2-3 the machine is CPUs 2 and 3: CPU 0 is not one.
	if err := Check("0", []int{2, 3}); err == nil || !strings.Contains(err.Error(), "CPU 0 does not exist") {
		t.Errorf("0 on CPUs 2-3: got %v, want CPU 0 named", err)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{0}, "0"},                        // one CPU
		{[]int{0, 1, 2, 3}, "0-3"},             // a run
		{[]int{0, 2}, "0,2"},                   // apart
		{[]int{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"}, // runs and single CPUs
		{nil, ""},                              // none
	} {
		if got := Format(tc.in); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := Parse(tc.want); tc.in != nil && (err != nil || !slices.Equal(back, tc.in)) {
			t.Errorf("Parse(Format(%v)) = %v, %v", tc.in, back, err)
		}
	}
}
