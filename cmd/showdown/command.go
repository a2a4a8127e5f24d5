package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/showdownlab/showdown/load"
)

// command is one subcommand. Each lives in its own file and registers
// itself from an init function, so adding one touches no other file.
type command struct {
	name    string
	summary string
	// run parses args and does the work. It returns nil, a usageError, an
	// exitError, or any other error (exit code exitFailure).
	run func(st *state, args []string) error
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("showdown: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// run dispatches to a subcommand and turns its error into an exit code. It
// is the one place that decides exit codes (see exitcodes.go).
func run(st *state, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return code(st, c.run(st, []string{"-h"}))
			}
			if args[1] == "version" {
				fmt.Fprintln(st.stdout, "Usage: showdown version\n\nPrints the version and VCS revision.")
				return exitOK
			}
			return unknownCommand(st, args[1])
		}
		usage(st.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(st.stdout, "showdown", version())
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		return unknownCommand(st, args[0])
	}
	return code(st, c.run(st, args[1:]))
}

// unknownCommand says name is no command and returns exitUsage.
func unknownCommand(st *state, name string) int {
	fmt.Fprintf(st.stderr, "showdown: unknown command %q\n", name)
	fmt.Fprintln(st.stderr, "hint: run 'showdown help' for the list of commands")
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "showdown: which stack serves more users, faster, with fewer resources, and stays correct")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: showdown <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "  version    print the version")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'showdown help <command>' for its flags.")
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints its usage to st.stderr.
func newFlagSet(st *state, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(st.stderr)
	fs.Usage = func() {
		fmt.Fprintf(st.stderr, "Usage: showdown %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning -h into errHelp and bad flags into a
// usageError.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err: err}
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseInterspersed parses flags that may come before or after the
// positional arguments ("attack URL --rate 10"), which package flag alone
// does not allow. It returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for n := len(args); n >= 0; n-- { // each pass consumes at least one argument
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			pos = append(pos, args[1:]...)
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, nil
}

// sizeFlag is a flag holding a size in bytes ("64KiB", "8MiB").
type sizeFlag int64

func (s *sizeFlag) String() string { return load.FormatSize(int64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := load.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}
