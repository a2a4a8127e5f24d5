package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		// a folder that holds no results
		{"empty folder", dir, "neither run.json"},
		// a missing path
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		// a .jtl without the columns we need
		{"jtl without header", write("a.jtl", "1,2,3\n"), `no "timeStamp" column`},
		// a .jtl whose timestamp is not a number, named by line
		{"jtl bad line", write("b.jtl", "timeStamp,elapsed,label,success\nx,1,a,true\n"), "b.jtl:2"},
		// JMeter's XML format
		{"jtl xml", write("c.jtl", "<?xml version=\"1.0\"?><testResults/>"), "save results as CSV"},
		// a k6 file without requests
		{"k6 empty", write("d.json", `{"type":"Metric","metric":"vus"}`+"\n"), "no requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
