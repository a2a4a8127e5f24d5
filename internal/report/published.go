package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/showdownlab/showdown/internal/plan"
	"github.com/showdownlab/showdown/internal/stats"
)

// PublishedRow sets one source's published figures beside this run's
// medians for the same setup and says whether the ranking reproduces.
type PublishedRow struct {
	plan.Published
	// Ours are this run's medians by implementation (absent: not measured).
	Ours map[string]float64 `json:"ours"`
	// PublishedRanking and OurRanking list the implementations best first.
	PublishedRanking []string `json:"published_ranking"`
	OurRanking       []string `json:"our_ranking,omitempty"`
	// Reproduces is "yes", "no" or "not measured".
	Reproduces string `json:"reproduces"`
	// Interval is the 95% confidence interval of our ratio of the
	// published first-ranked implementation's figure to the second's,
	// from the per-trial figures by Fieller's theorem (stats.RatioCI95);
	// PublishedInside says whether the published ratio lies within it:
	// "yes", "no", or why it cannot be said.
	Interval        *stats.RatioInterval `json:"ratio_ci95,omitempty"`
	PublishedInside string               `json:"published_ratio_inside_ci95"`
}

// published compares the plan's published figures with the summary's cells.
func published(p *plan.Plan, byWorkload map[string]*Workload) []PublishedRow {
	var out []PublishedRow
	for _, pub := range p.Published {
		row := PublishedRow{Published: pub, Ours: map[string]float64{}}
		trials := map[string][]float64{}
		if wl := byWorkload[pub.Workload]; wl != nil {
			for _, c := range wl.Cells {
				id := c.ID
				if id == "" {
					id = c.Implementation
				}
				if _, ok := pub.Figures[id]; ok && c.Level == pub.Level && c.Database == pub.Database && c.Trials > 0 {
					row.Ours[id] = c.Get(pub.Metric)
					trials[id] = c.Values[pub.Metric].Trials
				}
			}
		}
		more := plan.PublishedMetrics[pub.Metric]
		row.PublishedRanking = rank(pub.Figures, more)
		row.PublishedInside = "not measured"
		if a, b := row.PublishedRanking[0], row.PublishedRanking[1]; len(trials[a]) > 0 && len(trials[b]) > 0 {
			iv := stats.RatioCI95(trials[a], trials[b])
			row.Interval = &iv
			switch pa, pb := pub.Figures[a], pub.Figures[b]; {
			case pb == 0:
				row.PublishedInside = "no published ratio (a zero figure)"
			case iv.N < 2:
				row.PublishedInside = "no interval (one trial)"
			case iv.Unbounded:
				row.PublishedInside = "no finite interval (our second figure's interval includes zero)"
			case iv.Contains(pa / pb):
				row.PublishedInside = "yes"
			default:
				row.PublishedInside = "no"
			}
		}
		row.Reproduces = "not measured"
		if len(row.Ours) == len(pub.Figures) {
			row.OurRanking = rank(row.Ours, more)
			row.Reproduces = "no"
			if strings.Join(row.OurRanking, ",") == strings.Join(row.PublishedRanking, ",") {
				row.Reproduces = "yes"
			}
		}
		out = append(out, row)
	}
	return out
}

// rank orders ids by value, best first (ties by name).
func rank(vs map[string]float64, moreIsBetter bool) []string {
	ids := make([]string, 0, len(vs))
	for id := range vs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := vs[ids[i]], vs[ids[j]]
		if a == b {
			return ids[i] < ids[j]
		}
		return (a > b) == moreIsBetter
	})
	return ids
}

// IntervalText is our ratio's 95% interval as text: "[0.85, 1.21]", or "".
func (r PublishedRow) IntervalText() string {
	if r.Interval == nil || r.Interval.N < 2 || r.Interval.Unbounded {
		return ""
	}
	return fmt.Sprintf("[%.2f, %.2f]", r.Interval.Low, r.Interval.High)
}

// Ratio is the first-ranked implementation's figure over the second's,
// published and ours ("" when not measured).
func (r PublishedRow) Ratio() (pub, ours string) {
	a, b := r.PublishedRanking[0], r.PublishedRanking[1]
	pub = fmt.Sprintf("%.2f", r.Figures[a]/r.Figures[b])
	if oa, ok := r.Ours[a]; ok && r.Ours[b] != 0 {
		ours = fmt.Sprintf("%.2f", oa/r.Ours[b])
	}
	return pub, ours
}

// RatioText is both ratios as "0.42 / 3.28" (ours "-" when not measured),
// the HTML report's ratio column.
func (r PublishedRow) RatioText() string {
	pub, ours := r.Ratio()
	if ours == "" {
		ours = "-"
	}
	return pub + " / " + ours
}
