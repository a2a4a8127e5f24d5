// Package load is showdown's load engine: it runs a Scenario under an open
// model (a fixed arrival rate; latency measured from each request's
// intended send time, so coordinated omission is corrected) or a closed
// model (virtual users looping on their own keep-alive connections), and
// measures every request into HdrHistograms per step label and in total,
// cut into one-second intervals.
//
//	a := load.NewAttacker(load.Timeout(5*time.Second), load.OnProgress(show))
//	res, err := a.Attack(ctx, &load.Target{URL: "http://127.0.0.1:8080/"},
//		load.OpenModel{Rate: 5000, Duration: 30 * time.Second})
//	load.WriteReport(os.Stdout, res) // latency, service time, send lateness
//	err = res.WriteDir("results/run1")
//
// Responses are read by one HTTP/1.1 parser whose Limits no response can
// get past; a refused response is an error of its sample, never a crash.
// A Result is written to a directory as summary.json, timeseries.csv,
// latency.hlog, service.hlog and (open model) lateness.hlog; ReadDir,
// ReadSummary and ReadTimeseries read them back and Merge combines the
// shards of one attack exactly.
// load/README.md describes the formats and the engine's design.
package load
