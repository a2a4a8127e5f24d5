package service

import (
	"os"
	"path/filepath"
)

// LoadAs reads the manifest of the stack folder dir, a copy of a stack's
// folder at a git revision, and names it name (the stack's and the
// revision's, "go-stdlib@HEAD~1"): the name it has in every result, and
// by which it differs from the same stack at the working tree. The
// manifest is checked as any other, its name against the folder's.
func LoadAs(dir, name string) (*Manifest, error) {
	f := filepath.Join(dir, ManifestFile)
	if st, err := os.Stat(f); err != nil || st.IsDir() {
		return nil, Problems{missing(dir)}
	}
	m, ps := Load(f)
	if len(ps) > 0 {
		return nil, ps
	}
	m.Name = name
	return m, nil
}
