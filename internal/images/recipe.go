package images

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/showdownlab/showdown/internal/located"
	"github.com/showdownlab/showdown/internal/service"
)

// RecipeHint says where an implementation's image recipe goes.
const RecipeHint = "add a COPY-only Containerfile to the service folder and name it in showdown.yaml " +
	"(image: Containerfile), FROM scratch or a shared base (docs/kubernetes.md, Images)"

// Recipe is an implementation's image recipe as its folder declares it.
type Recipe struct {
	// File is the Containerfile's absolute path; its folder (the service
	// folder) is the build context.
	File string
	// Base is what the final stage is built FROM: "scratch", a shared
	// base the harness makes (BaseRef), or any other image.
	Base string
	// Shared are the shared bases the FROM lines name, which the harness
	// makes before building.
	Shared []string
}

// FindRecipe reads the image recipe that m names (its image field) and
// which shared bases it builds on; a service without one, or with one
// naming a base the harness does not make, is refused with a located error.
func (b *Builder) FindRecipe(m *service.Manifest) (*Recipe, error) {
	if m.Image == "" {
		return nil, &located.Error{File: m.File, Field: "image", Msg: m.Name + " has no image recipe", Hint: RecipeHint}
	}
	file := filepath.Join(m.Dir, m.Image)
	froms, err := fromLines(file)
	if err != nil {
		return nil, &located.Error{File: m.File, Field: "image", Msg: err.Error(), Hint: RecipeHint}
	}
	if len(froms) == 0 {
		return nil, &located.Error{File: file, Msg: "no FROM line", Hint: RecipeHint}
	}
	r := &Recipe{File: file, Base: froms[len(froms)-1].ref}
	for _, f := range froms {
		if !strings.HasPrefix(f.ref, DefaultRegistry+"/") {
			continue
		}
		name, ok := b.sharedBase(f.ref)
		if !ok {
			return nil, &located.Error{File: file, Line: f.line, Field: "FROM",
				Msg:  fmt.Sprintf("%s is no shared base the harness makes", f.ref),
				Hint: "use one of " + strings.Join(b.baseRefs(), ", ") + ", or scratch"}
		}
		r.Shared = append(r.Shared, name)
	}
	return r, nil
}

type fromLine struct {
	ref  string
	line int
}

var argRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// fromLines returns the images a Containerfile's FROM lines name, with the
// defaults of ARGs declared before them substituted; a stage named by an
// earlier FROM ... AS is not an image.
func fromLines(file string) ([]fromLine, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	args, stages := map[string]string{}, map[string]bool{}
	var out []fromLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "ARG":
			k, v, _ := strings.Cut(fields[1], "=")
			args[k] = strings.Trim(v, `"'`)
		case "FROM":
			rest := fields[1:]
			for len(rest) > 1 && strings.HasPrefix(rest[0], "--") {
				rest = rest[1:]
			}
			ref := argRef.ReplaceAllStringFunc(rest[0], func(s string) string {
				return args[argRef.FindStringSubmatch(s)[1]]
			})
			if !stages[strings.ToLower(ref)] {
				out = append(out, fromLine{ref: ref, line: n})
			}
			if len(rest) == 3 && strings.EqualFold(rest[1], "AS") {
				stages[strings.ToLower(rest[2])] = true
			}
		}
	}
	return out, sc.Err()
}
