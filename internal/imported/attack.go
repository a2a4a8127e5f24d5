package imported

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/load"
)

// ReadAttack turns an attack --out folder (its summary.json) into a
// one-level run; the level's series and histograms stay in the folder
// (Result.Level is nil), where results.ReadLevel reads them.
func ReadAttack(dir string) (*Result, error) {
	s, err := load.ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	level := s.Users
	if s.Model == "open" {
		level = int(math.Round(s.TargetRate))
	}
	name := "target"
	if u := s.Options["url"]; u != "" {
		name = u
	}
	abs, _ := filepath.Abs(dir)
	lr := &results.LevelRun{Level: level, Dir: ".", Status: results.OK, Total: s.Total, TargetRate: s.TargetRate,
		AchievedRate: s.AchievedRate, Late: s.Late, Dropped: s.Dropped, GeneratorCPUs: s.CPUs, Warnings: s.Warnings}
	if s.DurationSeconds > 0 && s.CPUs > 0 {
		lr.Generator.CPUMean = 100 * s.CPUSeconds / s.DurationSeconds
	}
	run := syntheticRun(filepath.Base(abs), name, "attack", s.Model, lr, s)
	run.Command = attackCommand(s)
	return &Result{Kind: Attack, Run: run}, nil
}

func attackCommand(s *load.Summary) string {
	if len(s.Options) == 0 {
		return ""
	}
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("showdown attack")
	for _, k := range keys {
		if k == "url" {
			continue
		}
		fmt.Fprintf(&b, " --%s=%s", k, shellQuote(s.Options[k]))
	}
	if u := s.Options["url"]; u != "" {
		b.WriteString(" " + shellQuote(u))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '=' || r == ',' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
