package scenario

import (
	"fmt"
	"strings"

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

// didYouMean returns a hint naming the candidate closest to s, or "".
func didYouMean(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(s)/3) {
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
