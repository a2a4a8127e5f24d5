package service

import "testing"

func TestPoolProcesses(t *testing.T) {
	perProcess := &Manifest{Name: "n", Pools: Pools{Per: PoolPerProcess, Processes: "WORKERS"}, Knobs: map[string]Knob{"WORKERS": {Default: "1"}}}
	shared := &Manifest{Name: "p", Pools: Pools{Per: PoolPerService, Processes: "WORKERS"}, Knobs: map[string]Knob{"WORKERS": {Default: "auto"}}}
	for _, tt := range []struct {
		name string
		m    *Manifest
		env  map[string]string
		want int
	}{
		// Each process its own pools: the knob's default, one process.
		{"per process default", perProcess, nil, 1},
		// Four workers, four pools.
		{"per process 4", perProcess, map[string]string{"WORKERS": "4"}, 4},
		// auto: one per CPU the service may use.
		{"per process auto", perProcess, map[string]string{"WORKERS": "auto"}, 3},
		// Workers that split the pool open one pool's worth, however many.
		{"shared", shared, map[string]string{"WORKERS": "8"}, 1},
		// No pools field: one pool's worth.
		{"default", &Manifest{Name: "g"}, nil, 1},
	} {
		got, err := tt.m.PoolProcesses(tt.env, 3)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
	if _, err := perProcess.PoolProcesses(map[string]string{"WORKERS": "many"}, 3); err == nil {
		t.Error("WORKERS=many: no error")
	}
}
