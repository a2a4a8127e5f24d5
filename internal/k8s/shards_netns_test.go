//go:build linux

package k8s

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/showdownlab/showdown/load"
)

// TestShardsInNetworkNamespaces runs the shard protocol for real: N
// 'showdown k8s shard' processes (each running 'attack --shard i/N'), each
// in its own network namespace joined to a bridge by a veth pair, like
// generator pods on separate hosts, against one service, with one start
// instant. Their merge ('showdown merge') must count what one generator
// at the whole rate counts, and its histogram must equal the histogram of
// every shard's samples exactly.
func TestShardsInNetworkNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds showdown and makes network namespaces; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	const (
		shards   = 4
		rate     = 800 // per second, all shards together: 200 each
		duration = 3 * time.Second
	)
	bin := filepath.Join(t.TempDir(), "showdown")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/showdownlab/showdown/cmd/showdown").CombinedOutput(); err != nil {
		t.Fatalf("building showdown: %v\n%s", err, out)
	}
	sim := newSimNet(t, shards+1)

	var hits atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"v":"HELLO"}`))
	})}
	ln, err := sim.listen()
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/uppercase"
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// One generator at the whole rate, from a host of its own.
	single := filepath.Join(dir, "single")
	if out, err := sim.exec(ctx, shards, bin, "attack", "--rate", strconv.Itoa(rate), "--duration", duration.String(), "--out", single, url).CombinedOutput(); err != nil {
		t.Fatalf("single generator: %v\n%s", err, out)
	}
	singleHits := hits.Load()

	// N shards, one per host, all starting at one instant.
	startAt := time.Now().Add(2 * time.Second).UTC()
	var wg sync.WaitGroup
	errs := make([]error, shards)
	outs := make([][]byte, shards)
	for i := 0; i < shards; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			outs[i], errs[i] = sim.exec(ctx, i, bin, "k8s", "shard", "--count", strconv.Itoa(shards), "--index", strconv.Itoa(i),
				"--start-at", startAt.Format(time.RFC3339Nano), "--out", filepath.Join(dir, "shards"), "--hold", "0s",
				"--", "--rate", strconv.Itoa(rate), "--duration", duration.String(), url).CombinedOutput()
		}(i)
	}
	wg.Wait()
	var shardDirs []string
	var parts []*load.Result
	for i := 0; i < shards; i++ {
		if errs[i] != nil {
			t.Fatalf("shard %d/%d: %v\n%s", i+1, shards, errs[i], outs[i])
		}
		d := filepath.Join(dir, "shards", "shard-"+strconv.Itoa(i+1))
		r, err := load.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if r.Summary.Start.Before(startAt) {
			t.Errorf("shard %d started measuring at %s, before the agreed instant %s", i+1, r.Summary.Start, startAt)
		}
		shardDirs = append(shardDirs, d)
		parts = append(parts, r)
	}
	merged := filepath.Join(dir, "merged")
	if out, err := exec.CommandContext(ctx, bin, append(append([]string{"merge"}, shardDirs...), "--out", merged)...).CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	m, err := load.ReadDir(merged)
	if err != nil {
		t.Fatal(err)
	}
	s, err := load.ReadDir(single)
	if err != nil {
		t.Fatal(err)
	}

	// Totals: both runs scheduled rate x duration sends; the shards' sum is
	// what the server saw from them, and equals the single generator's.
	if got, want := m.Summary.Total.Samples, s.Summary.Total.Samples; abs(got-want) > shards {
		t.Errorf("merged shards sent %d requests, one generator %d: want equal within %d (one per shard's rounding)", got, want, shards)
	}
	if got, want := m.Summary.Total.Samples, hits.Load()-singleHits; got != want {
		t.Errorf("merged shards counted %d requests, the service saw %d", got, want)
	}
	if m.Summary.Total.Errors != 0 || s.Summary.Total.Errors != 0 {
		t.Errorf("errors: shards %d, single %d", m.Summary.Total.Errors, s.Summary.Total.Errors)
	}
	if got, want := m.Summary.TargetRate, float64(rate); got < want*0.999 || got > want*1.001 {
		t.Errorf("merged target rate %.1f, want %d", got, rate)
	}

	// Histograms: the merged one equals every shard's samples together,
	// bucket by bucket.
	all := hdrhistogram.New(1, 3_600_000_000_000, 3)
	for _, r := range parts {
		addIntervals(t, all, r)
	}
	got := hdrhistogram.New(1, 3_600_000_000_000, 3)
	addIntervals(t, got, m)
	if got.TotalCount() != m.Summary.Total.Samples || all.TotalCount() != got.TotalCount() {
		t.Errorf("histogram counts: merged %d, all samples %d, summary %d", got.TotalCount(), all.TotalCount(), m.Summary.Total.Samples)
	}
	if !got.Equals(all) {
		t.Errorf("merged histogram differs from the histogram of all samples: p99 %d vs %d, max %d vs %d",
			got.ValueAtQuantile(99), all.ValueAtQuantile(99), got.Max(), all.Max())
	}
	t.Logf("%d shards in %d network namespaces: %d requests (one generator: %d), p99 %s, max %s",
		shards, shards, m.Summary.Total.Samples, s.Summary.Total.Samples, time.Duration(got.ValueAtQuantile(99)), time.Duration(got.Max()))
}

// addIntervals adds the TOTAL histogram of every interval of r to h.
func addIntervals(t *testing.T, h *hdrhistogram.Histogram, r *load.Result) {
	t.Helper()
	for _, iv := range r.Intervals {
		payload, ok := iv.Latency[load.TotalTag]
		if !ok {
			continue
		}
		ih, err := hdrhistogram.Decode([]byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		h.Merge(ih)
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// simNet is simulated hosts: network namespaces joined by veth pairs to a
// bridge in this namespace, where the service listens.
type simNet struct {
	t      *testing.T
	id     string
	subnet string // "10.231.X"
	hosts  []string
}

func newSimNet(t *testing.T, hosts int) *simNet {
	pid := os.Getpid()
	n := &simNet{t: t, id: strconv.Itoa(pid % 100000), subnet: fmt.Sprintf("10.231.%d", pid%250)}
	bridge := "sdb" + n.id
	t.Cleanup(func() {
		for i, ns := range n.hosts {
			exec.Command("ip", "link", "del", n.veth(i)).Run()
			exec.Command("ip", "netns", "del", ns).Run()
		}
		exec.Command("ip", "link", "del", bridge).Run()
	})
	n.run("ip", "link", "add", bridge, "type", "bridge")
	n.run("ip", "addr", "add", n.subnet+".1/24", "dev", bridge)
	n.run("ip", "link", "set", bridge, "up")
	for i := 0; i < hosts; i++ {
		ns := fmt.Sprintf("sd%s-%d", n.id, i)
		n.hosts = append(n.hosts, ns)
		peer := n.veth(i) + "p"
		n.run("ip", "netns", "add", ns)
		n.run("ip", "link", "add", n.veth(i), "type", "veth", "peer", "name", peer)
		n.run("ip", "link", "set", n.veth(i), "master", bridge)
		n.run("ip", "link", "set", n.veth(i), "up")
		n.run("ip", "link", "set", peer, "netns", ns)
		n.run("ip", "-n", ns, "addr", "add", fmt.Sprintf("%s.%d/24", n.subnet, 10+i), "dev", peer)
		n.run("ip", "-n", ns, "link", "set", peer, "up")
		n.run("ip", "-n", ns, "link", "set", "lo", "up")
	}
	return n
}

func (n *simNet) veth(i int) string { return fmt.Sprintf("sdv%s-%d", n.id, i) }

func (n *simNet) run(args ...string) {
	n.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		n.t.Skipf("cannot build the simulated network here (%v): %v: %s", args, err, out)
	}
}

// listen opens the service's socket on the bridge, reachable from every host.
func (n *simNet) listen() (net.Listener, error) { return net.Listen("tcp", n.subnet+".1:0") }

// exec runs a command on host i.
func (n *simNet) exec(ctx context.Context, i int, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", n.hosts[i]}, args...)...)
}
