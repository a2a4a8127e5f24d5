package stack

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/showdownlab/showdown/internal/cgroup"
	"github.com/showdownlab/showdown/internal/service"
	"github.com/showdownlab/showdown/load/atomicfile"
)

// DefaultHealthTimeout bounds a service's start, to its first healthy
// answer: long enough for a JVM starting on one CPU.
const DefaultHealthTimeout = 2 * time.Minute

// ServiceOptions configures StartService.
type ServiceOptions struct {
	// Env is the plan's and the implementation's environment; the
	// databases' DATABASE_URL and MYSQL_URL are added to it.
	Env map[string]string
	// Log receives the service's output (nil: discarded; the tail is kept).
	Log io.Writer
	// Wrap rewrites the run argv, e.g. to enter a control group and be
	// pinned to CPUs (cgroup.Group.Wrap); nil leaves it alone.
	Wrap func(argv []string) []string
	// HealthTimeout bounds the wait for the first healthy answer
	// (0: DefaultHealthTimeout).
	HealthTimeout time.Duration
	// Port is the port the service listens on (0: a free loopback port).
	Port int
	// Confine, when set, runs the service in a control group of its own
	// from its first instruction (package cgroup, after Wrap's rewrite);
	// Service.Applied says what was put in place, Service.Close removes it.
	Confine *Confinement
	// LogPath, when set, is where the service's output goes instead of
	// Log: under a temporary name (Service.LogPath) until Close, when it
	// appears whole. A start that fails closes it before returning.
	LogPath string
}

// Confinement is a service's control group: its name, its CPUs in
// taskset's list form ("" : any), its CPU quota in cores (0: none) and its
// memory cap in bytes (0: none).
type Confinement struct {
	Name        string
	CPUs        string
	CPUQuota    float64
	MemoryBytes int64
}

// Service is a started service that answered its health check.
type Service struct {
	*service.Instance
	// Startup is from process start to the first healthy answer.
	Startup time.Duration
	group   *cgroup.Group
	log     *atomicfile.File
}

// StartService starts m with the databases' environment and waits until
// it is healthy. When it does not become healthy it is stopped and the
// error returned.
func StartService(ctx context.Context, m *service.Manifest, dbs *Databases, o ServiceOptions) (*Service, error) {
	env := map[string]string{}
	for k, v := range o.Env {
		env[k] = v
	}
	if dbs != nil {
		for k, v := range dbs.Env() {
			env[k] = v
		}
	}
	run := *m
	if o.Wrap != nil {
		run.Run = o.Wrap(m.Run)
	}
	s := &Service{}
	if c := o.Confine; c != nil {
		grp, err := cgroup.New(c.Name, cgroup.Limits{CPUs: c.CPUs, CPUQuota: c.CPUQuota, MemoryBytes: c.MemoryBytes})
		if err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
		s.group = grp
		run.Run = grp.Wrap(run.Run)
	}
	if o.LogPath != "" {
		f, err := atomicfile.Create(o.LogPath, 0o644)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.log, o.Log = f, f
	}
	inst, err := service.Start(ctx, &run, service.StartOptions{Env: env, Log: o.Log, Port: o.Port})
	if err != nil {
		s.Close()
		return nil, err
	}
	timeout := o.HealthTimeout
	if timeout <= 0 {
		timeout = DefaultHealthTimeout
	}
	startup, err := inst.WaitHealthy(ctx, timeout)
	if err != nil {
		_ = inst.Stop(service.DefaultStopTimeout)
		s.Close()
		return nil, err
	}
	s.Instance, s.Startup = inst, startup
	return s, nil
}

// Applied is what the service's confinement put in place (zero without
// StartService's Confine).
func (s *Service) Applied() cgroup.Applied {
	if s.group == nil {
		return cgroup.Applied{}
	}
	return s.group.Applied()
}

// LogPath is the file the service's output is written to while it runs
// (the temporary name of StartService's LogPath; "" without one).
func (s *Service) LogPath() string {
	if s.log == nil {
		return ""
	}
	return s.log.Name()
}

// Close makes the service's log appear whole at its path and removes its
// control group, once the service has stopped; a second call does
// nothing.
func (s *Service) Close() {
	if s.log != nil {
		_ = s.log.Commit()
		s.log = nil
	}
	if s.group != nil {
		_ = s.group.Remove()
		s.group = nil
	}
}

// Stop sends SIGTERM, waits up to service.DefaultStopTimeout for the
// service to exit (SIGKILL after) and returns its exit code (-1 when it
// could not be read).
func (s *Service) Stop() (exitCode int, err error) {
	err = s.Instance.Stop(service.DefaultStopTimeout)
	wctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	code, werr := s.Wait(wctx)
	if werr != nil {
		return -1, err
	}
	return code, err
}

// Root is the showdown tree from SHOWDOWN_ROOT (getenv) or, unset, from
// the working folder upwards; the one way commands find it.
func Root(getenv func(string) string) (string, error) {
	start := getenv("SHOWDOWN_ROOT")
	if start == "" {
		var err error
		if start, err = os.Getwd(); err != nil {
			return "", fmt.Errorf("find the showdown tree: %w", err)
		}
	}
	return service.FindRoot(start)
}
