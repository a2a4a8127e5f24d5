package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"
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
// releases its signal handler.
func newState() (*state, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return &state{
		ctx:       ctx,
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		getenv:    os.Getenv,
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}, stop
}
