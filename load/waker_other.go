//go:build !linux

package load

import (
	"context"
	"time"
)

// waker needs Linux's timerfd; elsewhere pacers use a time.Timer.
type waker struct{}

func newWaker(context.Context) *waker { return nil }

func (*waker) sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

func (*waker) close() {}
