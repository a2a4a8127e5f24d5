package main

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/showdownlab/showdown/internal/k8s"
)

// Exit codes. Scripts may rely on them; keep them stable.
const (
	// exitOK: the command did what was asked and every check passed.
	exitOK = 0
	// exitFailure: the command could not do its work (bad target, build
	// failure, I/O error, ...).
	exitFailure = 1
	// exitUsage: bad flags or arguments; nothing was run.
	exitUsage = 2
	// exitThresholds: the run completed but a --fail-if threshold was
	// crossed.
	exitThresholds = 3
	// exitCheckFailed: a conformance check (verify) or an invariant failed.
	exitCheckFailed = 4
	// exitNotFinished: what was asked for is not there yet (k8s pack
	// --done on a shard still running); ask again later.
	exitNotFinished = k8s.ExitNotFinished
	// exitInterrupted: stopped by SIGINT or SIGTERM; partial results were
	// written.
	exitInterrupted = 130
)

// errHelp is returned when the user asked for -h; usage was already printed.
var errHelp = errors.New("help requested")

// usageError is a mistake in flags or arguments. Its hint tells what to do.
type usageError struct {
	err  error
	hint string
}

func (e usageError) Error() string { return e.err.Error() }

// exitError carries an explicit exit code; its err, if any, is printed.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// hinted is an error with advice for the user; any layer may return one.
type hinted interface{ Hint() string }

func code(st *state, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errHelp) {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(st.stderr, "showdown: %v\n", ue.err)
		if ue.hint != "" {
			fmt.Fprintf(st.stderr, "hint: %s\n", ue.hint)
		}
		return exitUsage
	}
	var h hinted
	hint := ""
	if errors.As(err, &h) {
		hint = h.Hint()
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(st.stderr, "showdown: %v\n", ee.err)
		}
		if hint != "" {
			fmt.Fprintf(st.stderr, "hint: %s\n", hint)
		}
		return ee.code
	}
	fmt.Fprintf(st.stderr, "showdown: %v\n", err)
	if hint != "" {
		fmt.Fprintf(st.stderr, "hint: %s\n", hint)
	}
	return exitFailure
}

// version reports the module version and VCS revision baked in by go build.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
}

// hintOf is err's own hint, or else def.
func hintOf(err error, def string) string {
	var h hinted
	if errors.As(err, &h) && h.Hint() != "" {
		return h.Hint()
	}
	return def
}
