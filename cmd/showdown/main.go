// Command showdown compares service implementations under load: it drives
// HTTP load (attack), checks services against their contract (verify) and
// runs whole experiments. The engine lives in package load; this command is
// a thin shell over it, one file per subcommand.
package main

import "os"

func main() {
	st, stop := newState()
	code := run(st, os.Args[1:])
	stop()
	os.Exit(code)
}
