//go:build !unix

package atomicfile

import (
	"errors"
	"os"
)

// errSyncUnsupported: folders are not synced here.
var errSyncUnsupported = errors.New("folder sync unsupported")

func umask() os.FileMode { return 0 }
