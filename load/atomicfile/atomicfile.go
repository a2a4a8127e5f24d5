// Package atomicfile writes a file whole or not at all: a reader, or a
// run killed half way, sees the old file or the whole new one, never a
// part. The content goes to a temporary file in the same folder, which is
// synced to disk and renamed over the final name, then the folder is
// synced so the rename itself survives a crash. Every result file of showdown is written here.
package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix starts the name of every temporary file: ".<name>.tmp-"
// followed by random characters. A process killed between create and
// rename leaves such a file behind, never a partial file under the final
// name.
const TempPrefix = "."

// tempSuffix follows the final name in a temporary file's name.
const tempSuffix = ".tmp-"

// IsTemp reports whether name (a base name) is one of this package's
// temporary files, which a reader of a results folder should ignore.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, TempPrefix) && strings.Contains(name, tempSuffix)
}

// File is a file being written under a temporary name. Commit makes it
// the file at its final path; Abort (or a Commit that fails) removes it.
// The embedded *os.File may be handed to a child process as its output.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts writing path (mode perm before the umask): the data goes
// to a temporary file in the same folder until Commit.
func Create(path string, perm os.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPrefix+base+tempSuffix+"*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes 0600 files; results are for everyone to read.
	if err := f.Chmod(perm &^ umask()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Path returns the final path the file is committed to.
func (f *File) Path() string { return f.path }

// Commit syncs the file, closes it, renames it to its final path and
// syncs the folder. After an error nothing is left under the temporary
// name and the final path is untouched. Commit after Commit or Abort is a
// no-op.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	tmp := f.Name()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort closes and removes the temporary file, leaving the final path as
// it was; a no-op after Commit. It is meant for defer.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// Write writes path atomically with what fill writes (buffered).
func Write(path string, perm os.FileMode, fill func(w io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	w := bufio.NewWriterSize(f, 64<<10)
	if err := fill(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFile writes data to path atomically, like os.WriteFile.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// syncDir makes a rename in dir durable. File systems that cannot sync a
// folder (EINVAL) are fine: they order the rename themselves.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errSyncUnsupported) {
		return err
	}
	return nil
}
