package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTimeseriesColumns(t *testing.T) {
	head := strings.Join(TimeseriesHeader, ",")
	tests := []struct {
		name string
		csv  string
		ok   bool
	}{
		// The engine's own file.
		{"engine columns", head + "\n0,10,1,10,1,2,3,4,5\n", true},
		// With the send-lateness columns.
		{"lateness", head + ",lateness_p50_ms,lateness_p99_ms\n0,10,1,10,1,2,3,4,5,0.01,0.2\n", true},
		// The lab appends resource columns after the engine's.
		{"extra columns after", head + ",service_cpu_percent,db_rss_kb\n0,10,1,10,1,2,3,4,5,99.5,\n", true},
		// The engine's columns must come first, in order.
		{"reordered", "requests,second" + strings.TrimPrefix(head, "second,requests") + "\n0,10,1,10,1,2,3,4,5\n", false},
		// An engine cell may not be empty (a resource cell may).
		{"empty engine cell", head + ",service_cpu_percent\n0,10,1,,1,2,3,4,5,\n", false},
		// A file too short to hold them.
		{"missing columns", "second,requests\n0,10\n", false},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, TimeseriesFile), []byte(tc.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		ivs, err := ReadTimeseries(dir)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.name, err, tc.ok)
			continue
		}
		if tc.ok && tc.name == "lateness" && (ivs[0].LatenessP50 != 0.01 || ivs[0].LatenessP99 != 0.2) {
			t.Errorf("%s: lateness not read: %+v", tc.name, ivs[0])
		}
		if tc.ok && (len(ivs) != 1 || ivs[0].Requests != 10 || ivs[0].Errors != 1 || ivs[0].Active != 5) {
			t.Errorf("%s: got %+v", tc.name, ivs)
		}
	}
}
