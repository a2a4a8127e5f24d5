//go:build !linux

package load

import (
	"context"
	"time"
)

// tickEngine needs Linux (epoll, SO_TIMESTAMPNS); elsewhere every attack
// runs on the goroutine engine.
type tickEngine struct{}

func (r *run) tickEngine(*schedule) *tickEngine { return nil }

func (e *tickEngine) run(context.Context, time.Time) {}
