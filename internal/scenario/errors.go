package scenario

import (
	"fmt"

	"github.com/showdownlab/showdown/internal/located"
)

// Error is one problem in a scenario file, located by line, column and the
// field it concerns (the project's one located error type).
type Error = located.Error

// ErrorList is every problem found in a scenario file, in file order; Load
// and Parse return all of them at once.
type ErrorList = located.List

// syntaxError turns a yaml.v3 parse error into an Error.
func syntaxError(file string, err error) *Error {
	return located.FromYAML(file, err)[0]
}

// didYouMean returns a hint naming the candidate closest to s
// (located.Closest), or "".
func didYouMean(s string, candidates []string) string {
	if c := located.Closest(s, candidates); c != "" {
		return fmt.Sprintf("did you mean %q?", c)
	}
	return ""
}
