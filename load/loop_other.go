//go:build !linux

package load

import (
	"sync/atomic"
	"time"
)

// The loop engine needs Linux (epoll, eventfd, SO_TIMESTAMPNS); elsewhere
// scenarios run on the goroutine engine.
type loop struct{}

func (r *run) closedLoops(ClosedModel, []int, []time.Time, *atomic.Bool) []*loop { return nil }

func (r *run) openLoops(*schedule, time.Time, *atomic.Bool) []*loop { return nil }

func (l *loop) run()     {}
func (l *loop) wake()    {}
func (l *loop) release() {}
