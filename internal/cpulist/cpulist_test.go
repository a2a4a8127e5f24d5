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
	if err := Check("0-1", 2); err != nil {
		t.Errorf("0-1 on 2 CPUs: %v", err)
	}
	if err := Check("0-2", 2); err == nil || !strings.Contains(err.Error(), "CPU 2 does not exist") {
		t.Errorf("0-2 on 2 CPUs: got %v, want CPU 2 named", err)
	}
}
