package k8s

import (
	"archive/tar"
	"bufio"
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
	"github.com/showdownlab/showdown/workloads"
)

// Markers a shard leaves in its results folder: DoneFile once its attack
// ended (holding "ok" or the error), CollectedFile once the controller
// copied the folder, which lets the shard exit.
const (
	DoneFile      = ".done"
	CollectedFile = ".collected"
)

// skuBatch is the rows per INSERT of the generated SKU table.
const skuBatch = 1000

// WriteInitDB writes the files the official database images run on their
// first start (/docker-entrypoint-initdb.d, in name order): each
// workload's schema and index, and for sku the generated rows, the same
// rows the local runner loads.
func WriteInitDB(dir, engine string, ws []string, seed int64, skuRows int, skuIndex bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, w := range ws {
		if got := string(workloads.Database(w)); got != engine {
			return fmt.Errorf("workload %s needs %q, not %s", w, got, engine)
		}
		files := []string{"schema.sql"}
		if w == "sku" {
			files = append(files, "rows")
		}
		if w != "sku" || skuIndex {
			files = append(files, "index.sql")
		}
		for j, f := range files {
			name := filepath.Join(dir, fmt.Sprintf("%02d-%s-%d-%s", 10*(i+1), w, j, strings.TrimSuffix(f, ".sql")+".sql"))
			if f == "rows" {
				if err := writeSKUInserts(name, seed, skuRows); err != nil {
					return err
				}
				continue
			}
			b, err := workloads.FS.ReadFile(w + "/" + f)
			if err != nil {
				if errors.Is(err, os.ErrNotExist) && f == "index.sql" {
					continue
				}
				return err
			}
			if err := os.WriteFile(name, b, 0o644); err != nil {
				return err
			}
		}
		if w == "sku" {
			// Fresh statistics, so the optimizer uses the index at once.
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-sku-9-analyze.sql", 10*(i+1))), []byte("ANALYZE TABLE purch_sku_master;\n"), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSKUInserts writes rows 0..n-1 as multi-row INSERTs, which any
// MySQL client runs (LOAD DATA would need local_infile on both sides).
func writeSKUInserts(name string, seed int64, n int) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	for i := 0; i < n; i++ {
		if i%skuBatch == 0 {
			if i > 0 {
				bw.WriteString(";\n")
			}
			bw.WriteString("INSERT INTO purch_sku_master (id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr) VALUES\n")
		} else {
			bw.WriteString(",\n")
		}
		r := db.SKURowAt(seed, i)
		fmt.Fprintf(bw, "(%d,%d,%s,%d,%s,%s,%s,%s)", r.ID, r.MemID, sqlString(r.MemCode), r.SKUID, sqlString(r.SKUCode), sqlString(r.Item), sqlString(r.SKUName), sqlString(r.SKUAbbr))
	}
	if n > 0 {
		bw.WriteString(";\n")
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sqlString quotes s as a SQL string literal for MySQL.
func sqlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `''`)
	return "'" + r.Replace(s) + "'"
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
