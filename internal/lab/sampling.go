package lab

import (
	"context"
	"time"

	"github.com/showdownlab/showdown/internal/monitor"
	"github.com/showdownlab/showdown/internal/results"
)

// samples collects a sampler's readings in the background.
type samples struct {
	done chan struct{}
	list []results.ResourceSample
}

// sampleInBackground samples pid's tree every second until ctx ends.
func sampleInBackground(ctx context.Context, pid int, opts ...monitor.Option) *samples {
	s := &samples{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = monitor.Run(ctx, pid, time.Second, func(m monitor.Sample) { s.list = append(s.list, results.ResourceSample(m)) }, opts...)
	}()
	return s
}

// wait returns the samples once the sampler has stopped; nil-safe.
func (s *samples) wait() []results.ResourceSample {
	if s == nil {
		return nil
	}
	<-s.done
	return s.list
}

// rssOf is the resident memory of pid's tree now, 0 if unreadable.
func rssOf(pid int) uint64 {
	s, err := monitor.NewSampler(pid).Sample(context.Background())
	if err != nil {
		return 0
	}
	return s.RSSBytes
}
