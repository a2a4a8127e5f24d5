//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// errSyncUnsupported is what fsync of a folder returns where it has no
// meaning.
var errSyncUnsupported = syscall.EINVAL

// processUmask is read once at start, before any goroutine of the program
// creates files: reading the umask means setting it, and it is set back
// at once.
var processUmask = func() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}()

func umask() os.FileMode { return processUmask }
