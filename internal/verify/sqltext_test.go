package verify

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/showdownlab/showdown/workloads"
)

// servicesDir is the implementations' folder, from this package's folder.
const servicesDir = "../../services"

// expectedServices are the implementations the project ships; each must
// have its manifest, and any other folder with one is checked too.
var expectedServices = []string{"go-gin", "go-stdlib", "java-helidon", "java-micronaut", "java-quarkus", "java-spring", "node-express", "node-fastify", "node-http", "python-django", "python-fastapi", "rust-actix", "rust-axum"}

var (
	dollarParam = regexp.MustCompile(`\$[0-9]+`)
	space       = regexp.MustCompile(`\s+`)
	// concat joins a SQL string split over source lines:
	// "...a " + "b..." (Java, JavaScript, Go) or '...' + '...'.
	concat = regexp.MustCompile("[\"'`]\\s*\\+\\s*[\"'`]")
)

// normalSQL folds whitespace and turns $n placeholders into ?.
func normalSQL(s string) string {
	return strings.TrimSpace(space.ReplaceAllString(dollarParam.ReplaceAllString(s, "?"), " "))
}

// sourceExts are the files searched for SQL text.
var sourceExts = []string{".go", ".java", ".kt", ".js", ".mjs", ".cjs", ".ts", ".sql", ".py", ".rb", ".rs", ".cs", ".properties", ".yaml", ".yml"}

// skipDirs are build outputs and dependencies, not sources.
var skipDirs = []string{"node_modules", "target", "bin", "build", "dist", ".git", ".gradle", ".mvn", "vendor", "test", "tests", "testdata", ".venv", "__pycache__"}

// serviceSources returns the normalised text of every source file of dir.
func serviceSources(t *testing.T, dir string) string {
	t.Helper()
	var all strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && slices.Contains(skipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(sourceExts, filepath.Ext(path)) || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 1<<20 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		all.WriteString(normalSQL(concat.ReplaceAllString(stripComments(string(b), filepath.Ext(path)), "")))
		all.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	return all.String()
}

// TestServicesRunTheContractSQL checks that every implementation holds
// each statement of its workloads' queries.sql verbatim (whitespace and
// placeholder style aside): the contract's "no ORM, no string building".
func TestServicesRunTheContractSQL(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(servicesDir, "*", "showdown.yaml"))
	names := slices.Clone(expectedServices)
	for _, d := range dirs {
		if n := filepath.Base(filepath.Dir(d)); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(servicesDir, name)
			raw, err := os.ReadFile(filepath.Join(dir, "showdown.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Workloads []string `yaml:"workloads"`
			}
			if err := yaml.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%s/showdown.yaml: %v", dir, err)
			}
			src := serviceSources(t, dir)
			for _, w := range m.Workloads {
				if workloads.Database(w) == "" {
					continue
				}
				qs, err := workloads.Queries(w, "queries.sql")
				if err != nil {
					t.Fatalf("workloads/%s/queries.sql: %v", w, err)
				}
				for qname, sql := range qs {
					if !strings.Contains(src, normalSQL(sql)) {
						t.Errorf("%s lists workload %s but no source file under %s holds its statement %s verbatim:\n  %s\n(hint: copy it from workloads/%s/queries.sql; only the placeholders may change, $1 -> ?)",
							name, w, dir, qname, normalSQL(sql), w)
					}
				}
			}
		})
	}
}

// TestNormalSQL pins the normalisation the SQL check relies on.
func TestNormalSQL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT a\n  FROM t WHERE id = $1", "SELECT a FROM t WHERE id = ?"},                   // lines and $n
		{"VALUES ($1, $2,\t$12)", "VALUES (?, ?, ?)"},                                          // many placeholders
		{"WHERE sku_id = ?", "WHERE sku_id = ?"},                                               // JDBC style unchanged
		{concat.ReplaceAllString(`"SELECT a " +`+"\n"+`   "FROM t"`, ""), `"SELECT a FROM t"`}, // a Java concatenation
	} {
		if got := normalSQL(c.in); got != c.want {
			t.Errorf("normalSQL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSQLCheckCatches proves the check fails for a source that builds its
// SQL: the sku statement with the id concatenated, as the source did.
func TestSQLCheckCatches(t *testing.T) {
	qs, err := workloads.Queries("sku", "queries.sql")
	if err != nil {
		t.Fatal(err)
	}
	commented := "// const q = `SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?`\nconst q = \"SELECT * FROM purch_sku_master\""
	if strings.Contains(normalSQL(stripComments(commented, ".go")), normalSQL(qs["get_sku"])) {
		t.Error("a statement in a comment passed for one the source runs")
	}
	bad := `db.query("SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = " + id)`
	if strings.Contains(normalSQL(concat.ReplaceAllString(bad, "")), normalSQL(qs["get_sku"])) {
		t.Error("a concatenated id passed for the bound statement")
	}
	good := "const q = `SELECT id, mem_id, mem_code, sku_id, sku_code, item,\n\tsku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?`"
	if !strings.Contains(normalSQL(concat.ReplaceAllString(good, "")), normalSQL(qs["get_sku"])) {
		t.Error("a statement split over lines was not found")
	}
}
