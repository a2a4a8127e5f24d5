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
	noTick := flag.Bool("notick", false, "use the goroutine engine for the open model")
	precise := flag.Float64("precise", -1, "load.PreciseRate: the rate up to which each request gets its own wake-up (0: always coarse; -1: the engine's default)")
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
	if *precise >= 0 {
		opts = append(opts, load.PreciseRate(*precise))
	}
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	res, err := load.NewAttacker(opts...).Attack(context.Background(), &load.Target{URL: *url}, m)
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
