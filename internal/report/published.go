package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/showdownlab/showdown/internal/plan"
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
}

// published compares the plan's published figures with the summary's cells.
func published(p *plan.Plan, byWorkload map[string]*Workload) []PublishedRow {
	var out []PublishedRow
	for _, pub := range p.Published {
		row := PublishedRow{Published: pub, Ours: map[string]float64{}}
		if wl := byWorkload[pub.Workload]; wl != nil {
			for _, c := range wl.Cells {
				if _, ok := pub.Figures[c.Implementation]; ok && c.Level == pub.Level && c.Trials > 0 {
					row.Ours[c.Implementation] = c.Get(pub.Metric)
				}
			}
		}
		more := plan.PublishedMetrics[pub.Metric]
		row.PublishedRanking = rank(pub.Figures, more)
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
