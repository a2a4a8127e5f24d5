package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults of a plan's at_rate.
const (
	// DefaultRateShare is the share of the slowest arm's throughput (at
	// the plan's first level, in the first start's rounds) that an
	// automatic rate takes. Below its saturation a stack's queue stays
	// short, so its p99 is mostly its own service time, and every faster
	// stack is further below its own saturation. At a half, one stall of
	// a busy host left the slowest stack's single worker in a backlog it
	// never caught up with (bench/README.md, "Where the constants come from"); two
	// fifths leave that margin, so the slowest stack is ranked at the
	// rate rather than named as unable to carry it.
	DefaultRateShare = 0.4
	// RateRoundRequests is how many requests a round at a rate carries at
	// least: 4,000 puts 40 samples above its p99, and its round is made
	// longer than the plan's round where the rate needs it (at most
	// MaxRateRound).
	RateRoundRequests = 4000
	// DefaultBusyShare is the busy rate's share of the second-slowest
	// arm's throughput (at the plan's first level, in the first start's
	// rounds): every stack but the slowest carries it, the second-slowest
	// at half its saturation, so the p99s are the stacks' queues' and
	// differ. Half the second-fastest left out three of six stacks
	// (bench/README.md, "Where the constants come from").
	DefaultBusyShare = 0.5
	// BusyHeadroom is the least ratio of an arm's own throughput to the
	// busy rate for the arm to be measured at it: an arm nearer its
	// saturation than that is left out, named, not overloaded.
	BusyHeadroom = 1.25
	MaxRateRound = 8 * time.Second
)

// AtRate is the plan's comparison at one rate (`at_rate:`): beside a
// closed-model plan's levels, every arm driven at the same open-model
// rate in the same interleaved rounds of the same warm starts, compared
// on p99 latency (from the intended send time), CPU time per request and
// memory: the same work, where at saturation every stack spends its
// whole CPU.
type AtRate struct {
	// Rates are the rates in requests per second; Auto (`auto` among
	// them) adds one rate, Share of the slowest arm's throughput in the
	// first start.
	Rates []int `json:"rates,omitempty"`
	Auto  bool  `json:"auto,omitempty"`
	// Busy (`busy` among the rates) adds the busy rate, DefaultBusyShare
	// of the second-slowest arm's throughput in the first start, where
	// p99 is ranked under load.
	Busy bool `json:"busy,omitempty"`
	// NoContrast (`contrast: none`) leaves out the automatic rate's
	// second measurement under the contrasting shape (ContrastArrivals
	// over ContrastConnections), which tells whether the CPU ranking
	// holds when the traffic's shape changes.
	NoContrast bool `json:"no_contrast,omitempty"`
	// Share is the automatic rate's share (DefaultRateShare when unset).
	Share Fraction `json:"share,omitempty"`
	// line is where at_rate is written, problems what UnmarshalYAML found
	// wrong, for validate.
	line     int
	problems []string
}

// UnmarshalYAML accepts `at_rate: auto`, `at_rate: 2000`, or
// {rates: [auto, 2000, 3000], share: 50%}.
func (a *AtRate) UnmarshalYAML(n *yaml.Node) error {
	a.line = n.Line
	rate := func(v *yaml.Node) {
		s := strings.TrimSpace(v.Value)
		switch s {
		case "auto":
			a.Auto = true
			return
		case "busy":
			a.Busy = true
			return
		}
		r, err := strconv.Atoi(s)
		if err != nil || r <= 0 || v.Kind != yaml.ScalarNode {
			a.problems = append(a.problems, fmt.Sprintf("rate %q is auto, busy or a whole number of requests per second", v.Value))
			return
		}
		a.Rates = append(a.Rates, r)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		rate(n)
		return nil
	case yaml.MappingNode:
	default:
		a.problems = append(a.problems, "at_rate is auto, a rate, or {rates: [...], share: ...}")
		return nil
	}
	for k := 0; k+1 < len(n.Content); k += 2 {
		key, val := n.Content[k], n.Content[k+1]
		switch key.Value {
		case "rates":
			if val.Kind == yaml.SequenceNode {
				for _, v := range val.Content {
					rate(v)
				}
			} else {
				rate(val)
			}
		case "contrast":
			switch strings.TrimSpace(val.Value) {
			case "none", "false", "off":
				a.NoContrast = true
			case "even over 1 connection", "true", "on":
			default:
				a.problems = append(a.problems, fmt.Sprintf("contrast %q is none (no second shape) or on (even arrivals over 1 connection, the default)", val.Value))
			}
		case "share":
			if err := val.Decode(&a.Share); err != nil {
				a.problems = append(a.problems, fmt.Sprintf("share %q is a percentage (e.g. 50%%)", val.Value))
			}
		default:
			a.problems = append(a.problems, fmt.Sprintf("unknown field %q (at_rate has rates, share and contrast)", key.Value))
		}
	}
	return nil
}

// The contrasting shape of the automatic rate: clockwork arrivals over
// one connection, the traffic of a single client in a loop (and of the
// open model before it had a shape).
const (
	ContrastArrivals    = "even"
	ContrastConnections = 1
)

// Contrasted reports whether the automatic rate is measured under the
// contrasting shape too.
func (a *AtRate) Contrasted() bool { return a != nil && a.Auto && !a.NoContrast }

// ShareOrDefault is the automatic rate's share.
func (a *AtRate) ShareOrDefault() float64 {
	if a == nil || a.Share <= 0 {
		return DefaultRateShare
	}
	return float64(a.Share)
}

// RateRound is each arm's measured interval at rate (req/s): the plan's
// round, made long enough for RateRoundRequests, at most MaxRateRound.
func (p *Plan) RateRound(rate float64) time.Duration {
	d := time.Duration(p.Rounds.Round)
	if rate > 0 {
		need := time.Duration(float64(RateRoundRequests) / rate * float64(time.Second)).Round(100 * time.Millisecond)
		d = max(d, min(need, MaxRateRound))
	}
	return d
}

// validateAtRate checks the plan's at_rate.
func (p *Plan) validateAtRate(add func(path []string, hint, format string, args ...any)) {
	a := p.AtRate
	if a == nil {
		return
	}
	hint := "e.g. at_rate: {rates: [auto], share: 50%} or at_rate: 2000"
	for _, m := range a.problems {
		add([]string{"at_rate"}, hint, "%s", m)
	}
	if len(a.problems) == 0 && !a.Auto && !a.Busy && len(a.Rates) == 0 {
		add([]string{"at_rate"}, hint, "at_rate names no rate")
	}
	if a.Share < 0 || a.Share > 1 {
		add([]string{"at_rate", "share"}, "e.g. share: 50%", "share must be between 0%% and 100%%, not %v", a.Share)
	}
	if p.Load.Model == "open" {
		add([]string{"at_rate"}, "remove at_rate: an open-model plan's levels are rates already", "at_rate goes with a closed-model plan")
	}
	if p.SLO != nil {
		add([]string{"at_rate"}, "remove at_rate, or the slo", "at_rate goes with interleaved rounds, not a capacity search")
	}
	if ok, why := p.Interleaved(); !ok && len(p.Arms()) > 1 {
		add([]string{"at_rate"}, "remove at_rate, or let the plan interleave", "at_rate is measured in interleaved rounds, which this plan does not run: %s", why)
	}
}
