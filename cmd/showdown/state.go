package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/showdownlab/showdown/internal/proctree"
)

// state is everything process-wide a subcommand may touch. Tests build their
// own state so the CLI runs end to end without a real terminal or signals.
type state struct {
	// ctx is cancelled on the first SIGINT or SIGTERM; a subcommand stops
	// its work, still writes what it measured, and returns.
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// getenv reads the environment (os.Getenv outside tests).
	getenv func(string) string
	// stdoutTTY reports whether stdout is a terminal, for live progress.
	stdoutTTY bool
	// stderrTTY reports whether stderr is a terminal, for live progress.
	stderrTTY bool
}

// newState returns the state of the real process and a function that
// releases its signal handler. The first SIGINT or SIGTERM cancels the
// state's context; a second one forces the exit (forceExit).
func newState() (*state, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	released := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-released:
			return
		}
		fmt.Fprintln(os.Stderr, "\nshowdown: stopping, writing what was measured (interrupt again to exit at once)")
		cancel()
		select {
		case <-sigs:
		case <-released:
			return
		}
		forceExit(os.Stderr)
	}()
	st := &state{
		ctx:       ctx,
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		getenv:    os.Getenv,
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
	return st, func() {
		signal.Stop(sigs)
		close(released)
		cancel()
	}
}

// forceExit is the second interrupt: it kills every process this one
// started (services, databases, builds; SIGKILL, no waiting) and exits
// with exitInterrupted. Result files are never half written (they are
// renamed into place whole); the private database folders left in the
// temporary folder are removed by the next run that starts a database.
func forceExit(stderr io.Writer) {
	fmt.Fprintln(stderr, "showdown: interrupted twice: killing the services and databases it started and exiting")
	for range 3 { // a child may fork while its parent is being killed
		left := proctree.Descendants(int32(os.Getpid()))
		if len(left) == 0 {
			break
		}
		for _, pid := range left {
			_ = syscall.Kill(int(pid), syscall.SIGKILL)
		}
	}
	os.Exit(exitInterrupted)
}
