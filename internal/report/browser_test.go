package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless-capable Chromium, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// browse loads a page in headless Chromium with extra flags and returns
// its standard output and the console lines it logged (the report logs
// only errors; an uncaught exception is logged too).
func browse(t *testing.T, bin, page string, flags ...string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	args = append(append(args, flags...), "file://"+page)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	var console []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") {
			console = append(console, line)
		}
	}
	return stdout.String(), console
}

var drawnRE = regexp.MustCompile(`data-charts="(\d+)"[^>]*data-drawn="(\d+)"`)

// checkPage loads a page and returns its problems: console lines, and
// fewer charts drawn than the page says it holds; and the page as the
// browser built it.
func checkPage(t *testing.T, bin, page string) ([]string, string) {
	dom, console := browse(t, bin, page, "--dump-dom")
	problems := console
	m := drawnRE.FindStringSubmatch(dom)
	switch {
	case m == nil:
		problems = append(problems, "the page's check script did not run (no data-drawn on body)")
	case m[1] != m[2] || m[1] == "0":
		problems = append(problems, "charts: "+m[2]+" drawn, "+m[1]+" expected")
	}
	return problems, dom
}

func TestBrowserReport(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium is not installed (apt-get install chromium): cannot check report.html in a browser")
	}
	for _, tc := range []struct{ name, input string }{
		// the run fixture: every kind of chart
		{"run", "testdata/run"},
		// an import: no resource columns, no run.json
		{"k6", "../imported/testdata/k6.json.gz"},
		// an interleaved run judged again: the verdict, its forest plot
		// and the rounds first
		{"noisy-day", noisyDay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Load(tc.input)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			page := filepath.Join(dir, "report.html")
			var b bytes.Buffer
			if err := WriteHTML(&b, res, WithRejudging()); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			problems, dom := checkPage(t, bin, page)
			for _, p := range problems {
				t.Error(p)
			}
			if len(res.Run.Comparisons) > 0 {
				checkVerdictFirst(t, dom, res.Run.Comparisons[0].Verdict)
			}
			shot := filepath.Join(dir, "report.png")
			browse(t, bin, page, "--screenshot="+shot, "--window-size=1400,3000", "--hide-scrollbars")
			if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
				t.Errorf("no screenshot at %s (%v)", shot, err)
			}
			t.Logf("screenshot: %s", shot)
			if dst := os.Getenv("SHOWDOWN_REPORT_SCREENSHOT_DIR"); dst != "" {
				png, _ := os.ReadFile(shot)
				os.WriteFile(filepath.Join(dst, tc.name+".png"), png, 0o644)
			}
		})
	}
}

// The check itself must be able to fail: a page with a console error and
// an empty chart.
func TestBrowserCheckFails(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	page := filepath.Join(t.TempDir(), "bad.html")
	html := `<!DOCTYPE html><html><body data-charts="2"><svg class="chart" id="c1"><path d="M0 0L10 10"/></svg><svg class="chart" id="c2"></svg>` +
		"<script>" + checkScript(t) + "</script></body></html>"
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, _ := checkPage(t, bin, page)
	joined := strings.Join(problems, "\n")
	if !strings.Contains(joined, "empty chart c2") || !strings.Contains(joined, "1 drawn, 2 expected") {
		t.Errorf("problems %q: want the empty chart and the count", problems)
	}
}

// checkScript is the report's own check script, taken from the template.
func checkScript(t *testing.T) string {
	i := strings.LastIndex(pageTemplate, "<script>")
	j := strings.LastIndex(pageTemplate, "</script>")
	if i < 0 || j < i {
		t.Fatal("no script in the template")
	}
	return pageTemplate[i+len("<script>") : j]
}
