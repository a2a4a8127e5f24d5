package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/showdownlab/showdown/internal/db"
	"github.com/showdownlab/showdown/internal/results"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/internal/stack"
)

// StackService is a service started by package stack that the faults can
// kill, terminate and start again on the same port.
type StackService struct {
	m    *service.Manifest
	dbs  *stack.Databases
	opts stack.ServiceOptions

	mu  sync.Mutex
	svc *stack.Service
}

var _ Service = (*StackService)(nil)

// StartStackService starts m against dbs (stack.StartService) and keeps
// its port for the restarts.
func StartStackService(ctx context.Context, m *service.Manifest, dbs *stack.Databases, o stack.ServiceOptions) (*StackService, error) {
	svc, err := stack.StartService(ctx, m, dbs, o)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(svc.URL())
	if err == nil {
		o.Port, err = strconv.Atoi(u.Port())
	}
	if err != nil {
		_, _ = svc.Stop()
		return nil, fmt.Errorf("%s: port of %s: %w", m.Name, svc.URL(), err)
	}
	return &StackService{m: m, dbs: dbs, opts: o, svc: svc}, nil
}

func (s *StackService) current() *stack.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.svc
}

// URL is the service's base URL, the same across restarts.
func (s *StackService) URL() string { return s.current().URL() }

// Startup is the last start's time to the first healthy answer.
func (s *StackService) Startup() time.Duration { return s.current().Startup }

// LogTail returns the last n lines of the running service's output.
func (s *StackService) LogTail(n int) string { return s.current().LogTail(n) }

// Kill sends SIGKILL to the service's whole process group (its workers
// too, as the kernel's OOM killer of a container would) and waits.
func (s *StackService) Kill() error {
	svc := s.current()
	if err := syscall.Kill(-svc.PID(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case <-svc.Exited():
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL", s.m.Name, svc.PID())
	}
	_ = svc.Instance.Stop(time.Second) // reaps what is left of the group
	return nil
}

// Terminate sends SIGTERM to the service.
func (s *StackService) Terminate() error { return s.current().Signal(syscall.SIGTERM) }

// Wait waits for the service to exit and returns its exit code.
func (s *StackService) Wait(ctx context.Context) (int, error) { return s.current().Wait(ctx) }

// Restart starts the service again on the same port once the last one has
// exited (it is killed if it has not) and waits until it is healthy.
func (s *StackService) Restart(ctx context.Context) error {
	if err := s.Kill(); err != nil {
		return err
	}
	svc, err := stack.StartService(ctx, s.m, s.dbs, s.opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.svc = svc
	s.mu.Unlock()
	return nil
}

// Stop stops the running service (SIGTERM, then SIGKILL).
func (s *StackService) Stop() (int, error) { return s.current().Stop() }

// StackTarget is the target of a service started by StartStackService on
// the bank's databases; dbs should run durably (stack.DatabaseOptions).
func StackTarget(s *StackService, dbs *stack.Databases, durable bool) (Target, error) {
	server, err := dbs.For("bank")
	if err != nil {
		return Target{}, err
	}
	return Target{
		Stack:      s.m.Name,
		BaseURL:    s.URL(),
		Service:    s,
		Database:   server,
		Bank:       dbs.Servers,
		Durability: db.DurableSettings(durable),
	}, nil
}

// RunStack is one stack's fault test, whoever asks (the lab's faults
// section, showdown verify --faults): it brings dbs up again (an earlier
// test may have left a database paused), prepares the bank afresh, starts
// m with o, runs the faults fo against it under the name id (m's name when
// empty) and stops it. After a verdict other than a pass it quotes the
// service's last tail lines in fo.Progress (0: none).
func RunStack(ctx context.Context, m *service.Manifest, id string, dbs *stack.Databases, o stack.ServiceOptions, fo Options, tail int) (*results.FaultTest, error) {
	if err := dbs.Up(ctx); err != nil {
		return nil, err
	}
	if _, err := dbs.Prepare(ctx, []string{"bank"}, db.PrepareOptions{}); err != nil {
		return nil, err
	}
	progress := fo.Progress
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "starting %s\n", m.Name)
	svc, err := StartStackService(ctx, m, dbs, o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if _, err := svc.Stop(); err != nil {
			fmt.Fprintf(progress, "stopping %s: %v\n", m.Name, err)
		}
	}()
	fmt.Fprintf(progress, "%s healthy at %s after %s\n", m.Name, svc.URL(), svc.Startup().Round(time.Millisecond))
	t, err := StackTarget(svc, dbs, true)
	if err != nil {
		return nil, err
	}
	if id != "" {
		t.Stack = id
	}
	ft, err := Run(ctx, t, fo)
	if err != nil {
		return nil, fmt.Errorf("fault test of %s: %w", t.Stack, err)
	}
	if ft.Verdict != "pass" && tail > 0 {
		if lines := svc.LogTail(tail); lines != "" {
			fmt.Fprintf(progress, "last lines of %s's output:\n%s\n", m.Name, indent(lines, "  | "))
		}
	}
	return ft, nil
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}
