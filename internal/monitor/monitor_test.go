package monitor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the process under observation: with
// MONITOR_ROLE set, TestMain runs a role instead of the tests.
const (
	childMiB     = 64
	childThreads = 8
	childFiles   = 40
)

func TestMain(m *testing.M) {
	switch os.Getenv("MONITOR_ROLE") {
	case "child":
		runChild()
		return
	case "grandchild":
		runGrandchild()
		return
	}
	os.Exit(m.Run())
}

// burn spins for d of wall time.
func burn(d time.Duration) {
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1e5; i++ {
			x += i
		}
	}
	_ = x
}

func cpuSelf() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// runGrandchild burns CPU, reports its own CPU seconds, then idles until
// stdin closes.
func runGrandchild() {
	burn(400 * time.Millisecond)
	fmt.Printf("%.4f\n", cpuSelf())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// runChild holds known resources: memory, OS threads, files and a busy
// grandchild. It prints "ready <own cpu> <grandchild cpu>" when done
// burning and idles until stdin closes.
func runChild() {
	mem := make([]byte, childMiB<<20)
	for i := 0; i < len(mem); i += 4096 {
		mem[i] = 1
	}
	for i := 0; i < childThreads; i++ {
		go func() {
			runtime.LockOSThread()
			select {}
		}()
	}
	var files []*os.File
	for i := 0; i < childFiles; i++ {
		f, err := os.Open(os.DevNull)
		if err != nil {
			panic(err)
		}
		files = append(files, f)
	}
	gc := exec.Command(os.Args[0])
	gc.Env = append(os.Environ(), "MONITOR_ROLE=grandchild")
	gcIn, _ := gc.StdinPipe()
	gcOut, _ := gc.StdoutPipe()
	if err := gc.Start(); err != nil {
		panic(err)
	}
	burn(600 * time.Millisecond)
	line, _ := bufio.NewReader(gcOut).ReadString('\n')
	fmt.Printf("ready %.4f %s\n", cpuSelf(), strings.TrimSpace(line))
	_, _ = io.Copy(io.Discard, os.Stdin)
	gcIn.Close()
	_ = gc.Wait()
	runtime.KeepAlive(mem)
	runtime.KeepAlive(files)
}

// startChild starts the observed tree and waits until it is ready. It
// returns the child, its stdin (closing it ends the tree), and the CPU
// seconds the child and grandchild reported for themselves.
func startChild(t *testing.T) (*exec.Cmd, io.WriteCloser, float64) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MONITOR_ROLE=child")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child did not report: %v", err)
	}
	var self, grand float64
	if _, err := fmt.Sscanf(line, "ready %g %g", &self, &grand); err != nil {
		t.Fatalf("child said %q: %v", line, err)
	}
	return cmd, in, self + grand
}

func TestSamplerMeasuresKnownTree(t *testing.T) {
	cmd, _, reportedCPU := startChild(t)
	ctx := context.Background()
	s := NewSampler(cmd.Process.Pid)
	first, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.CPUPercent != 0 || first.Interval != 0 {
		t.Errorf("first sample: CPUPercent %v, Interval %v; want 0, 0 (no interval yet)", first.CPUPercent, first.Interval)
	}
	if first.Processes != 2 {
		t.Errorf("Processes = %d, want 2 (child and grandchild)", first.Processes)
	}
	// Both processes have finished burning; their cumulative CPU is what
	// they measured themselves, to the kernel's tick (10 ms each) and a
	// little Go runtime background work.
	if diff := first.CPUSeconds - reportedCPU; diff < -0.05 || diff > 0.05+0.1*reportedCPU {
		t.Errorf("CPUSeconds = %.3f, processes reported %.3f for themselves", first.CPUSeconds, reportedCPU)
	}
	if min := uint64(childMiB) << 20; first.RSSBytes < min {
		t.Errorf("RSSBytes = %d MiB, want at least %d MiB", first.RSSBytes>>20, childMiB)
	}
	if first.Threads < childThreads+2 {
		t.Errorf("Threads = %d, want at least %d (locked threads + grandchild)", first.Threads, childThreads+2)
	}
	if first.FDs < childFiles {
		t.Errorf("FDs = %d, want at least %d", first.FDs, childFiles)
	}
	// The tree is idle now. A per-interval figure must show that, where a
	// lifetime average (what ps prints) would still show the burn.
	time.Sleep(300 * time.Millisecond)
	second, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second.Interval <= 0 {
		t.Errorf("second sample Interval = %v, want > 0", second.Interval)
	}
	if second.CPUPercent > 25 {
		t.Errorf("idle tree CPUPercent = %.1f, want near 0 (delta over the interval, not lifetime)", second.CPUPercent)
	}
}

func TestSamplerCountsBusyInterval(t *testing.T) {
	// The test process itself burns CPU between two readings of itself:
	// the CPU seconds of the interval must cover what getrusage saw.
	s := NewSampler(os.Getpid(), RootOnly())
	ctx := context.Background()
	a, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := cpuSelf()
	burn(300 * time.Millisecond)
	used := cpuSelf() - before
	b, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := b.CPUPercent * b.Interval.Seconds() / 100
	if got < used-0.03 {
		t.Errorf("interval CPU = %.3fs, but the process used %.3fs in it", got, used)
	}
	if b.CPUSeconds < a.CPUSeconds {
		t.Errorf("cumulative CPU went backwards: %.3f then %.3f", a.CPUSeconds, b.CPUSeconds)
	}
}

func TestRunStopsWhenProcessExits(t *testing.T) {
	cmd, in, _ := startChild(t)
	var n int
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), cmd.Process.Pid, 50*time.Millisecond, func(Sample) { n++ })
	}()
	time.Sleep(200 * time.Millisecond)
	in.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrGone) {
			t.Errorf("Run returned %v, want ErrGone", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not stop after the process exited")
	}
	if n < 1 {
		t.Errorf("fn called %d times, want at least 1", n)
	}
}

func TestRunUnknownPid(t *testing.T) {
	// Pid 2^22+1 is above Linux's pid_max limit, so no process has it.
	err := Run(context.Background(), 1<<22+1, time.Second, func(Sample) {})
	if err == nil {
		t.Fatal("Run on a missing pid returned nil")
	}
}

func TestCSVWriter(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewCSVWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, s := range []Sample{
		{Time: t0, Processes: 1, RSSBytes: 2048, Threads: 3, FDs: 4},
		{Time: t0.Add(1500 * time.Millisecond), Interval: 1500 * time.Millisecond, Processes: 2, CPUPercent: 150.25, CPUSeconds: 2.5, RSSBytes: 4096, Threads: 5, FDs: 6, CtxSwitches: 7},
	} {
		if err := w.Write(s); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		CSVHeader,
		{"2026-01-02T03:04:05Z", "0.000", "1", "0.0", "0.00", "2", "3", "4", "0"},
		{"2026-01-02T03:04:06.5Z", "1.500", "2", "150.2", "2.50", "4", "5", "6", "7"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("got\n%v\nwant\n%v", rows, want)
	}
	if _, err := strconv.ParseFloat(rows[2][3], 64); err != nil {
		t.Error(err)
	}
}

// TestReadCSV reads back what CSVWriter wrote, a torn last row included.
func TestReadCSV(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewCSVWriter(&buf)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := []Sample{
		{Time: t0, Processes: 1, RSSBytes: 2048, Threads: 3, FDs: 4},
		{Time: t0.Add(time.Second), Interval: time.Second, Processes: 2, CPUPercent: 150.5, CPUSeconds: 2.5, RSSBytes: 4096, Threads: 5, FDs: 6, CtxSwitches: 7},
	}
	for _, s := range in {
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	buf.WriteString("2026-01-02T03:04:07Z,2.000,1") // torn
	got, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(in) {
		t.Errorf("got\n%v\nwant\n%v", got, in)
	}
	if _, err := ReadCSV(strings.NewReader("when,what\n")); err == nil {
		t.Error("a foreign header was accepted")
	}
}

// BenchmarkSample measures the CPU time of one reading of a two-process
// tree (about 12 threads). At 1 Hz the sampler's share of a core is
// %core@1Hz: the goal is under 1%.
func BenchmarkSample(b *testing.B) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "MONITOR_ROLE=child")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	s := NewSampler(cmd.Process.Pid)
	ctx := context.Background()
	b.ResetTimer()
	cpu0 := cpuSelf()
	for i := 0; i < b.N; i++ {
		if _, err := s.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time, not wall time: on a busy machine the wall clock mostly
	// measures waiting for a core.
	perOp := (cpuSelf() - cpu0) / float64(b.N)
	b.ReportMetric(perOp*1e6, "cpu-us/op")
	b.ReportMetric(perOp*100, "%core@1Hz")
}
