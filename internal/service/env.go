package service

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MinJava is the lowest JDK feature release the Java services need.
const MinJava = 21

// passEnv are the caller's variables every build and run gets; nothing
// else of the caller's environment reaches a service.
var passEnv = []string{"PATH", "HOME", "LANG", "JAVA_HOME"}

// isBuildEnv reports whether a caller variable configures a toolchain and
// so is passed to build steps (never to the running service): Go's module
// proxy and caches, npm, Maven, Cargo and pip settings, the CA bundles
// their clients read, HTTP proxies, TMPDIR.
func isBuildEnv(k string) bool {
	switch {
	case strings.HasPrefix(k, "GO"), strings.HasPrefix(k, "npm_config_"), strings.HasPrefix(k, "NPM_CONFIG_"),
		strings.HasPrefix(k, "MAVEN_"), strings.HasPrefix(k, "CARGO_"), strings.HasPrefix(k, "RUSTUP_"),
		strings.HasPrefix(k, "PIP_"), k == "TMPDIR":
		return true
	}
	switch k {
	case "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS":
		return true
	}
	switch strings.ToLower(k) {
	case "http_proxy", "https_proxy", "no_proxy":
		return true
	}
	return false
}

// environ builds the environment of m's build steps (build true) or server:
// the passed-through caller variables, the knob defaults, then set (an
// empty value removes a variable). A Java service without JAVA_HOME gets
// the newest JDK >= MinJava found on the machine, first on PATH.
func (m *Manifest) environ(build bool, set map[string]string) []string {
	env := map[string]string{}
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if build {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && isBuildEnv(k) {
				env[k] = v
			}
		}
	}
	if m.Language == "java" && env["JAVA_HOME"] == "" {
		if home, _ := FindJDK(MinJava); home != "" {
			env["JAVA_HOME"] = home
			env["PATH"] = filepath.Join(home, "bin") + string(os.PathListSeparator) + env["PATH"]
		}
	}
	for k, kn := range m.Knobs {
		if kn.Default != "" {
			env[k] = kn.Default
		}
	}
	for k, v := range set {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// lookPath resolves argv[0] the way the child would: a name with a slash is
// relative to dir, a bare name is searched in env's PATH.
func lookPath(name, dir string, env []string) string {
	if strings.Contains(name, "/") {
		if filepath.IsAbs(name) {
			return name
		}
		return filepath.Join(dir, name)
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(p) {
				if d == "" {
					continue
				}
				f := filepath.Join(d, name)
				if st, err := os.Stat(f); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					return f
				}
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// FindJDK returns the home and feature release of the newest JDK whose
// release is at least min: JAVA_HOME when set (and new enough), else the
// one of java on PATH, else the newest under /usr/lib/jvm. It returns ""
// when there is none.
func FindJDK(min int) (home string, release int) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		if r := jdkRelease(h); r >= min {
			return h, r
		}
	}
	var cands []string
	if p, err := exec.LookPath("java"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			cands = append(cands, filepath.Dir(filepath.Dir(real)))
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/jvm/*")
	cands = append(cands, dirs...)
	for _, c := range cands {
		if r := jdkRelease(c); r >= min && r > release {
			home, release = c, r
		}
	}
	return home, release
}

// jdkRelease reads the feature release from home/release (JAVA_VERSION="25.0.1"
// gives 25); 0 when home is not a JDK with javac.
func jdkRelease(home string) int {
	if _, err := os.Stat(filepath.Join(home, "bin", "javac")); err != nil {
		return 0
	}
	f, err := os.Open(filepath.Join(home, "release"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "JAVA_VERSION=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		v = strings.TrimPrefix(v, "1.") // 1.8.0 is release 8
		major, _, _ := strings.Cut(v, ".")
		n, _ := strconv.Atoi(strings.TrimRightFunc(major, func(r rune) bool { return r < '0' || r > '9' }))
		return n
	}
	return 0
}
