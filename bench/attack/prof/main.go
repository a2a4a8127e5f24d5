// Command prof runs one attack with a CPU profile, for tuning the engine:
// prof -url http://127.0.0.1:PORT/ -rate 10000 -d 5s -cpuprofile cpu.out
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/showdownlab/showdown/load"
)

func main() {
	url := flag.String("url", "", "target `URL`")
	rate := flag.Float64("rate", 10000, "open model rate (0: closed model)")
	users := flag.Int("users", 50, "closed model users")
	d := flag.Duration("d", 5*time.Second, "duration")
	prof := flag.String("cpuprofile", "", "write a CPU profile to `file`")
	memprof := flag.String("memprofile", "", "write an allocation profile to `file`")
	noTick := flag.Bool("notick", false, "use the goroutine engine (load.WithoutTickEngine)")
	slack := flag.Duration("slack", -1, "load.PaceSlack: at most one wake-up per `time` (0: one per request; -1: the engine's default)")
	scenario := flag.Bool("scenario", false, "run the URL as a scenario (the loop engine in the open model too), not as a load.Target")
	flag.Parse()
	runtime.MemProfileRate = 4096
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var m load.Model = load.OpenModel{Rate: *rate, Duration: *d}
	if *rate == 0 {
		m = load.ClosedModel{Users: *users, Duration: *d}
	}
	var opts []load.Option
	if *noTick {
		opts = append(opts, load.WithoutTickEngine())
	}
	if *slack >= 0 {
		opts = append(opts, load.PaceSlack(*slack))
	}
	var sc load.Scenario = &load.Target{URL: *url}
	if *scenario {
		sc = load.StatusChecked(urlScenario{*url})
	}
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res, err := load.NewAttacker(opts...).Attack(context.Background(), sc, m)
	if err != nil {
		log.Fatal(err)
	}
	load.WriteReport(os.Stdout, res)
	if *memprof != "" {
		f, _ := os.Create(*memprof)
		pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}
	var m1 runtime.MemStats
	runtime.ReadMemStats(&m1)
	fmt.Printf("allocations: %.2f per request, GC cycles %d\n",
		float64(m1.Mallocs-m0.Mallocs)/float64(max(res.Summary.Total.Samples, 1)), m1.NumGC-m0.NumGC)
}

// urlScenario is a one-step scenario of a GET of one URL that is not a
// *load.Target, so that it runs as the lab's scenarios do.
type urlScenario struct{ url string }

func (s urlScenario) Steps() []string       { return []string{"GET"} }
func (s urlScenario) NewUser(int) load.User { return urlUser(s) }

type urlUser urlScenario

func (u urlUser) Request(_, _ int, req *load.Request) error {
	req.Method, req.URL = "GET", u.url
	return nil
}

func (urlUser) Check(_, _ int, resp *load.Response) error {
	if resp.Status != 200 {
		return &load.CheckError{Reason: "status " + fmt.Sprint(resp.Status)}
	}
	return nil
}
