package results

import (
	"encoding/json"
	"testing"
)

// TestAnswered: a capacity recorded before the search's answers reads
// with the answer its other fields imply; one recorded with an answer
// and the host's floor keeps both through run.json.
func TestAnswered(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       Answer
	}{
		{"old bracket", `{"arm":"a","rate":8007,"low":7966,"high":8048,"probes":[]}`, AnswerBracket},
		{"old lower bound", `{"arm":"a","rate":5934,"low":5934,"lower_bound":true,"reason":"generator late","probes":[]}`, AnswerGeneratorBound},
		{"old failure", `{"arm":"a","rate":0,"low":0,"high":0,"reason":"start 1 failed the objective at every rate","probes":[]}`, AnswerServiceFailed},
		{"never searched", `{"arm":"a","rate":0,"low":0,"high":0,"probes":[]}`, ""},
		{"recorded", `{"arm":"a","rate":0,"low":0,"high":0,"answer":"below-host-floor","host_floor":{"rate":200,"seconds":3,"samples":600,"lateness_p99_ms":2.4,"p50_ms":0.9,"p99_ms":2.6,"server_cpu":0},"above_floor":true,"resolvable_ms":7.8,"probes":[]}`, AnswerBelowFloor},
	} {
		var c Capacity
		if err := json.Unmarshal([]byte(tc.json), &c); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.Answered(); got != tc.want {
			t.Errorf("%s: answered %q, want %q", tc.name, got, tc.want)
		}
		out, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		var back Capacity
		if err := json.Unmarshal(out, &back); err != nil || back.Answered() != tc.want || back.Floor.Ms() != c.Floor.Ms() || back.ResolvableMs != c.ResolvableMs {
			t.Errorf("%s: through run.json: %+v (%v), want %+v", tc.name, back, err, c)
		}
	}
}
