package load

import "sync"

// loopGroup runs the loop engine's loops (loop_linux.go) to their end.
type loopGroup struct {
	mu       sync.Mutex
	loops    []*loop
	released bool
	wg       sync.WaitGroup
}

// startLoops runs each loop on a goroutine of its own.
func startLoops(loops []*loop) *loopGroup {
	g := &loopGroup{loops: loops}
	for _, l := range loops {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			l.run()
		}()
	}
	return g
}

// wake ends every loop's current wait, so each sees its stop flag or the
// run's abort at once; safe from any goroutine at any time, also after
// the loops have ended.
func (g *loopGroup) wake() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return // their descriptors are closed, maybe reused
	}
	for _, l := range g.loops {
		l.wake()
	}
}

// wait returns when every loop has ended, and releases their descriptors.
func (g *loopGroup) wait() {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.released = true
	for _, l := range g.loops {
		l.release()
	}
}
