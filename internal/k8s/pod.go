package k8s

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/load/atomicfile"
	"github.com/showdownlab/showdown/workloads"
)

// Markers a shard leaves in its results folder: DoneFile once its attack
// ended (holding "ok" or the error), CollectedFile once the controller
// copied the folder, which lets the shard exit.
const (
	DoneFile      = ".done"
	CollectedFile = ".collected"
)

// ExitNotFinished is the exit code of 'showdown k8s pack --done' on a
// folder whose shard or warm-up has not finished: the controller polls
// again. It is the CLI's documented code for "not finished yet".
const ExitNotFinished = 5

// WriteInitDB writes the files the official database images run on their
// first start (/docker-entrypoint-initdb.d, in name order): for each
// workload, one file per step of db.PrepareSteps, the steps the local
// runner's db.Prepare runs (the sku rows as INSERTs).
func WriteInitDB(dir, engine string, ws []string, seed int64, skuRows int, skuIndex bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, w := range ws {
		if got := string(workloads.Database(w)); got != engine {
			return fmt.Errorf("workload %s needs %q, not %s", w, got, engine)
		}
		steps, err := db.PrepareSteps(w, db.PrepareOptions{SKURows: skuRows, Seed: seed, NoSKUIndex: !skuIndex})
		if err != nil {
			return err
		}
		for j, st := range steps {
			name := filepath.Join(dir, fmt.Sprintf("%02d-%s-%d-%s.sql", 10*(i+1), w, j, st.Name))
			if err := atomicfile.Write(name, 0o644, func(w io.Writer) error { return db.WriteStep(w, st) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// Pack writes the regular files of dir (not below it, markers excluded)
// to w as a tar stream: what the controller copies over the exec API, as
// kubectl cp does, from images that have no tar of their own.
func Pack(w io.Writer, dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == DoneFile || e.Name() == CollectedFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.Name(), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Unpack reads a tar stream written by Pack into dir, refusing paths that
// would leave it.
func Unpack(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			if n == 0 {
				return errors.New("unpack: empty archive")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("unpack: %w", err)
		}
		name := filepath.Base(h.Name)
		if name != h.Name || h.Typeflag != tar.TypeReg {
			return fmt.Errorf("unpack: refusing entry %q", h.Name)
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		_, err = io.Copy(f, io.LimitReader(tr, 1<<30))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

// WaitForStart waits until start, the instant every shard of a level
// starts at (none: at once), or until ctx ends, which it returns.
func WaitForStart(ctx context.Context, start time.Time) error {
	if start.IsZero() {
		return nil
	}
	t := time.NewTimer(time.Until(start))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// MarkDone writes dir's DoneFile once its run ended: "ok", or runErr;
// it returns that verdict. The controller copies dir only once it is
// there.
func MarkDone(dir string, runErr error) (string, error) {
	verdict := "ok"
	if runErr != nil {
		verdict = runErr.Error()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return verdict, err
	}
	return verdict, atomicfile.WriteFile(filepath.Join(dir, DoneFile), []byte(verdict+"\n"), 0o644)
}

// Hold waits until the controller has collected dir (CollectedFile
// appears), ctx ends or d has passed; it reports whether it was collected.
func Hold(ctx context.Context, dir string, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(filepath.Join(dir, CollectedFile)); err == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}

// ServicePID finds the process a sampler watches in a pod with a shared
// process namespace: the oldest process whose parent is outside the
// namespace (ppid 0), other than PID 1 (the pod's pause process) and
// except (the sampler itself).
func ServicePID(procDir string, except int) (int, error) {
	ents, err := os.ReadDir(procDir)
	if err != nil {
		return 0, err
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 || pid == except {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procDir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command, which may hold spaces and parentheses.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == "0" {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return 0, errors.New("no service process in this pod's process namespace (is shareProcessNamespace set?)")
	}
	sort.Ints(pids)
	return pids[0], nil
}
