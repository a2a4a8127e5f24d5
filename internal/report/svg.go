package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// palette gives each implementation its colour, in plan order (Tableau 10,
// distinguishable in print and by most colour-blind readers).
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"}

func colorOf(i int) string { return palette[i%len(palette)] }

// Chart geometry, in SVG user units (the SVG scales to the page width).
const (
	chartWidth  = 1000
	marginLeft  = 78
	marginRight = 16
	legendRow   = 22
	panelGap    = 26
	axisBottom  = 40
)

// series is one line of a panel.
type series struct {
	name  string
	color string
	// style is "" (solid), "dash", "dot" or "thin".
	style string
	xs    []float64
	ys    []float64 // NaN: no point
	// lo and hi draw a min-max whisker at each point when set.
	lo, hi []float64
	// marks draws a dot per point, with tips as hover text.
	marks bool
	tips  []string
}

// panel is one plot area with its own y axis.
type panel struct {
	yLabel string
	height float64
	yLog   bool
	yFmt   func(float64) string
	lines  []series
}

// chart is one SVG: panels stacked on a shared x axis, a legend on top
// and optional hover bands (one per x step, spanning every panel).
type chart struct {
	// width is the SVG's width in user units (chartWidth when 0): a
	// narrower one for the charts shown two abreast keeps text readable.
	width  float64
	id     string
	title  string
	xLabel string
	// xLog plots x on a log scale; xTicks, when set, fixes the ticks.
	xLog   bool
	xTicks []tick
	xFmt   func(float64) string
	// xInt keeps x ticks on whole numbers (seconds).
	xInt bool
	// categories, when set, places x values 0..n-1 evenly with these labels.
	categories []string
	panels     []panel
	legend     []legendItem
	// bands are hover texts for x = bandX[i] (half a step either side).
	bandX    []float64
	bandTips []string
	// wrapLegend puts legend items that do not fit on further rows.
	wrapLegend bool
}

type legendItem struct{ name, color, style string }

type tick struct {
	v     float64
	label string
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; len(out) < 50; v += step {
		out = append(out, math.Round(v/step)*step)
		if v >= hi-step*1e-9 {
			break
		}
	}
	return out
}

func logTicks(lo, hi float64) []float64 {
	var out []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)) && len(out) < 30; e++ {
		out = append(out, math.Pow(10, e))
	}
	return out
}

// num formats a tick value compactly.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimZeros(fmt.Sprintf("%.1f", v/1e9)) + "G"
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZeros(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100 || a == 0:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return trimZeros(fmt.Sprintf("%.2f", v))
	}
	return trimZeros(fmt.Sprintf("%.4f", v))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// render draws the chart as an inline SVG element: the legend, each
// panel from the top, then the x axis under them all and the hover bands.
func (c *chart) render() string {
	v := &canvas{c: c, width: c.width}
	if v.width == 0 {
		v.width = chartWidth
	}
	v.placeLegend()
	height := legendRow + 8.0 + v.extra
	for _, p := range c.panels {
		height += p.height + panelGap
	}
	height += axisBottom - panelGap
	v.xlo, v.xhi = c.xRange()
	v.plotW = v.width - marginLeft - marginRight
	b := &v.b
	fmt.Fprintf(b, `<svg class="chart" id="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, c.id, f1(v.width), f1(height), html.EscapeString(c.title))
	fmt.Fprintf(b, `<title>%s</title>`, html.EscapeString(c.title))
	v.legend()
	top := float64(legendRow+8) + v.extra
	var panelTop []float64
	for _, p := range c.panels {
		panelTop = append(panelTop, top)
		v.panel(p, top)
		top += p.height + panelGap
	}
	bottom := top - panelGap
	v.xAxis(panelTop, bottom)
	v.bands(bottom)
	b.WriteString(`</svg>`)
	return b.String()
}

// canvas is one drawing of a chart: the SVG so far, the plot's width and
// x range, and where each legend entry goes.
type canvas struct {
	b            strings.Builder
	c            *chart
	width, plotW float64
	xlo, xhi     float64
	// at is each legend entry's place; extra the legend's height beyond
	// its first row.
	at    []struct{ x, y float64 }
	extra float64
}

// placeLegend places the legend's entries; it wraps onto more rows
// where it is wider than the chart.
func (v *canvas) placeLegend() {
	lx, ly := float64(marginLeft), 12.0
	for _, it := range v.c.legend {
		w := 40 + 6.6*float64(len([]rune(it.name)))
		if v.c.wrapLegend && lx > marginLeft && lx+w-14 > v.width-marginRight {
			lx, ly = marginLeft, ly+legendRow
		}
		v.at = append(v.at, struct{ x, y float64 }{lx, ly})
		lx += w
	}
	v.extra = ly - 12
}

// xRange is the x axis's range: the categories', or the lines' points.
func (c *chart) xRange() (xlo, xhi float64) {
	if c.categories != nil {
		return -0.5, float64(len(c.categories)) - 0.5
	}
	xlo, xhi = math.Inf(1), math.Inf(-1)
	for _, p := range c.panels {
		for _, s := range p.lines {
			for i, x := range s.xs {
				if !math.IsNaN(s.ys[i]) {
					xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
				}
			}
		}
	}
	if math.IsInf(xlo, 0) {
		xlo, xhi = 0, 1
	}
	if xhi == xlo {
		xhi = xlo + 1
	}
	return xlo, xhi
}

// x maps an x value to the SVG's x.
func (v *canvas) x(x float64) float64 {
	if v.c.xLog {
		return marginLeft + v.plotW*(math.Log10(x)-math.Log10(v.xlo))/(math.Log10(v.xhi)-math.Log10(v.xlo))
	}
	return marginLeft + v.plotW*(x-v.xlo)/(v.xhi-v.xlo)
}

func (v *canvas) legend() {
	for i, it := range v.c.legend {
		lx, ly := v.at[i].x, v.at[i].y
		fmt.Fprintf(&v.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"%s/>`, f1(lx), f1(ly), f1(lx+22), f1(ly), it.color, dashAttr(it.style))
		fmt.Fprintf(&v.b, `<text x="%s" y="%s" class="lg">%s</text>`, f1(lx+27), f1(ly+4), html.EscapeString(it.name))
	}
}

// yRange is a panel's y range and its ticks: from zero, or by decades
// on a log scale.
func (p panel) yRange() (ylo, yhi float64, ticks []float64) {
	ylo, yhi = math.Inf(1), math.Inf(-1)
	for _, s := range p.lines {
		for i, y := range s.ys {
			if math.IsNaN(y) || (p.yLog && y <= 0) {
				continue
			}
			ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
			if s.hi != nil && !math.IsNaN(s.hi[i]) {
				yhi = math.Max(yhi, s.hi[i])
			}
		}
	}
	if math.IsInf(ylo, 0) {
		ylo, yhi = 0, 1
	}
	if p.yLog {
		ticks = logTicks(ylo, yhi)
		ylo, yhi = ticks[0], ticks[len(ticks)-1]
		if ylo == yhi {
			yhi = ylo * 10
		}
		return ylo, yhi, ticks
	}
	ylo = math.Min(0, ylo)
	if yhi <= ylo {
		yhi = ylo + 1
	}
	ticks = niceTicks(ylo, yhi, 4)
	return ylo, math.Max(yhi, ticks[len(ticks)-1]), ticks
}

// panel draws p with its top at top: its frame, y ticks and label, and
// its lines.
func (v *canvas) panel(p panel, top float64) {
	ylo, yhi, yt := p.yRange()
	ymap := func(y float64) float64 {
		if p.yLog {
			if y <= 0 {
				y = ylo
			}
			return top + p.height*(1-(math.Log10(y)-math.Log10(ylo))/(math.Log10(yhi)-math.Log10(ylo)))
		}
		return top + p.height*(1-(y-ylo)/(yhi-ylo))
	}
	fmt.Fprintf(&v.b, `<rect x="%d" y="%s" width="%s" height="%s" class="pa"/>`, marginLeft, f1(top), f1(v.plotW), f1(p.height))
	yf := p.yFmt
	if yf == nil {
		yf = num
	}
	for _, t := range yt {
		y := ymap(t)
		fmt.Fprintf(&v.b, `<line x1="%d" y1="%s" x2="%s" y2="%s" class="gr"/><text x="%d" y="%s" class="yt">%s</text>`,
			marginLeft, f1(y), f1(marginLeft+v.plotW), f1(y), marginLeft-5, f1(y+4), html.EscapeString(yf(t)))
	}
	fmt.Fprintf(&v.b, `<text class="al" transform="translate(14 %s) rotate(-90)">%s</text>`, f1(top+p.height/2), html.EscapeString(p.yLabel))
	for _, s := range p.lines {
		v.line(s, p.yLog, ymap)
	}
}

// line draws s: its path (broken where a value is missing), its
// intervals and its marks with their tips.
func (v *canvas) line(s series, yLog bool, ymap func(float64) float64) {
	var d strings.Builder
	pen := false
	for i, x := range s.xs {
		y := s.ys[i]
		if math.IsNaN(y) || (yLog && y <= 0) {
			pen = false
			continue
		}
		if pen {
			d.WriteString("L")
		} else {
			d.WriteString("M")
		}
		d.WriteString(f1(v.x(x)) + " " + f1(ymap(y)))
		pen = true
	}
	if d.Len() > 0 {
		w := "2"
		if s.style == "thin" {
			w = "1.2"
		}
		fmt.Fprintf(&v.b, `<path d="%s" fill="none" stroke="%s" stroke-width="%s"%s><title>%s</title></path>`, d.String(), s.color, w, dashAttr(s.style), html.EscapeString(s.name))
	}
	for i, x := range s.xs {
		if s.lo != nil && !math.IsNaN(s.lo[i]) && !math.IsNaN(s.hi[i]) && s.hi[i] > s.lo[i] {
			X := f1(v.x(x))
			fmt.Fprintf(&v.b, `<path d="M%s %sV%sM%s %sh8M%s %sh8" stroke="%s" stroke-width="1.3" transform="translate(0 0)"/>`,
				X, f1(ymap(s.lo[i])), f1(ymap(s.hi[i])), f1(v.x(x)-4), f1(ymap(s.lo[i])), f1(v.x(x)-4), f1(ymap(s.hi[i])), s.color)
		}
		if s.marks && !math.IsNaN(s.ys[i]) {
			tip := s.name
			if i < len(s.tips) {
				tip = s.tips[i]
			}
			fmt.Fprintf(&v.b, `<circle cx="%s" cy="%s" r="4" fill="%s"><title>%s</title></circle>`, f1(v.x(x)), f1(ymap(s.ys[i])), s.color, html.EscapeString(tip))
		}
	}
}

// xTicks are the x axis's ticks: the categories, the chart's own, or
// round values.
func (v *canvas) xTicks() []tick {
	c := v.c
	var xt []tick
	switch {
	case c.categories != nil:
		for i, l := range c.categories {
			xt = append(xt, tick{float64(i), l})
		}
	case c.xTicks != nil:
		xt = c.xTicks
	default:
		xf := c.xFmt
		if xf == nil {
			xf = num
		}
		for _, t := range niceTicks(v.xlo, v.xhi, int(v.plotW/90)) {
			if t >= v.xlo && t <= v.xhi && (!c.xInt || t == math.Trunc(t)) {
				xt = append(xt, tick{t, xf(t)})
			}
		}
	}
	return xt
}

// xAxis draws the x ticks as grid lines through every panel, their
// labels and the axis's label under bottom.
func (v *canvas) xAxis(panelTop []float64, bottom float64) {
	for _, t := range v.xTicks() {
		if t.v < v.xlo-1e-9 || t.v > v.xhi+1e-9 {
			continue
		}
		x := f1(v.x(t.v))
		for i, p := range v.c.panels {
			fmt.Fprintf(&v.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="gr"/>`, x, f1(panelTop[i]), x, f1(panelTop[i]+p.height))
		}
		fmt.Fprintf(&v.b, `<text x="%s" y="%s" class="xt">%s</text>`, x, f1(bottom+15), html.EscapeString(t.label))
	}
	fmt.Fprintf(&v.b, `<text x="%s" y="%s" class="al xl">%s</text>`, f1(marginLeft+v.plotW/2), f1(bottom+33), html.EscapeString(v.c.xLabel))
}

// bands draws the hover bands: a tip half a step either side of each x.
func (v *canvas) bands(bottom float64) {
	c := v.c
	if len(c.bandX) <= 1 {
		return
	}
	step := v.x(c.bandX[1]) - v.x(c.bandX[0])
	for i, x := range c.bandX {
		fmt.Fprintf(&v.b, `<rect x="%s" y="%s" width="%s" height="%s" class="hb"><title>%s</title></rect>`,
			f1(v.x(x)-step/2), f1(legendRow+v.extra), f1(step), f1(bottom-legendRow-v.extra), html.EscapeString(c.bandTips[i]))
	}
}

func dashAttr(style string) string {
	switch style {
	case "dash":
		return ` stroke-dasharray="7 4"`
	case "dot":
		return ` stroke-dasharray="2 3"`
	case "dashdot":
		return ` stroke-dasharray="9 3 2 3"`
	}
	return ""
}

// forest is a forest plot: one row per ratio, its point and 95% interval
// on a log axis, with 1 (no difference) marked. A ratio whose interval
// leaves out 1 is drawn solid with a filled mark, one that holds 1 grey
// with a hollow mark, so the separated pairs stand out in print too.
type forest struct {
	id, title, xLabel string
	// width is the SVG's width in user units (chartWidth when 0).
	width float64
	rows  []forestRow
}

// forestRow is one ratio of a forest plot.
type forestRow struct {
	label            string
	ratio, low, high float64
	significant      bool
	// tip is the row's hover text: the ratio in the verdict's words.
	tip string
}

// Forest plot geometry.
const (
	forestRowHeight = 30
	forestSolid     = "#1d2329"
	forestFaint     = "#8a949e"
)

// ratioTicks are round ratios covering [lo, hi] on a log axis: 1-2-5 per
// decade, finer where the range is narrow.
func ratioTicks(lo, hi float64) []float64 {
	steps := [][]float64{
		{1, 2, 5},
		{1, 1.5, 2, 3, 5, 7},
		{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8},
		{1, 1.05, 1.1, 1.15, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2, 2.5, 3, 4, 5, 6, 7, 8, 9},
	}
	var out []float64
	for _, mant := range steps {
		out = out[:0]
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range mant {
				if v := m * math.Pow(10, e); v >= lo && v <= hi {
					out = append(out, v)
				}
			}
		}
		if len(out) >= 4 {
			break
		}
	}
	return out
}

// render draws the forest plot as an inline SVG element.
func (f *forest) render() string {
	width := f.width
	if width == 0 {
		width = chartWidth
	}
	labelW := 100.0
	for _, r := range f.rows {
		labelW = math.Max(labelW, 16+6.6*float64(len([]rune(r.label))))
	}
	lo, hi := 1.0, 1.0
	for _, r := range f.rows {
		for _, v := range []float64{r.low, r.ratio, r.high} {
			if v > 0 && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	lo, hi = lo/1.06, hi*1.06
	plotW := width - labelW - marginRight
	xmap := func(x float64) float64 {
		x = math.Min(math.Max(x, lo), hi)
		return labelW + plotW*(math.Log(x)-math.Log(lo))/(math.Log(hi)-math.Log(lo))
	}
	top := float64(legendRow + 8)
	plotH := float64(forestRowHeight * len(f.rows))
	height := top + plotH + axisBottom
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart forest" id="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, f.id, f1(width), f1(height), html.EscapeString(f.title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(f.title))
	// legend: what solid and faint mean
	lx := 10.0
	for _, it := range []struct {
		sig  bool
		name string
	}{{true, "separated (interval leaves out 1)"}, {false, "no significant difference (holds 1)"}} {
		b.WriteString(forestMark(lx+11, 12, it.sig))
		fmt.Fprintf(&b, `<line x1="%s" y1="12" x2="%s" y2="12" stroke="%s" stroke-width="2"/>`, f1(lx), f1(lx+22), forestColor(it.sig))
		fmt.Fprintf(&b, `<text x="%s" y="16" class="lg">%s</text>`, f1(lx+27), html.EscapeString(it.name))
		lx += 40 + 6.6*float64(len(it.name))
	}
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>`, f1(labelW), f1(top), f1(plotW), f1(plotH))
	for _, t := range ratioTicks(lo, hi) {
		x := f1(xmap(t))
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="gr"/><text x="%s" y="%s" class="xt">%s×</text>`,
			x, f1(top), x, f1(top+plotH), x, f1(top+plotH+15), num(t))
	}
	// 1: no difference
	one := f1(xmap(1))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#222" stroke-width="1.5" stroke-dasharray="5 3"/>`, one, f1(top-4), one, f1(top+plotH+4))
	for i, r := range f.rows {
		y := top + forestRowHeight*(float64(i)+0.5)
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="yt">%s</text>`, f1(labelW-6), f1(y+4), html.EscapeString(r.label))
		if !(r.ratio > 0) {
			continue
		}
		col := forestColor(r.significant)
		l, h := r.low, r.high
		if !(l > 0) {
			l = lo
		}
		if !(h > 0) || math.IsInf(h, 0) {
			h = hi
		}
		fmt.Fprintf(&b, `<path d="M%s %sH%sM%s %sv10M%s %sv10" stroke="%s" stroke-width="2.2" fill="none"><title>%s</title></path>`,
			f1(xmap(l)), f1(y), f1(xmap(h)), f1(xmap(l)), f1(y-5), f1(xmap(h)), f1(y-5), col, html.EscapeString(r.tip))
		b.WriteString(forestMark(xmap(r.ratio), y, r.significant))
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%d" class="hb"><title>%s</title></rect>`,
			f1(0), f1(y-forestRowHeight/2), f1(width), forestRowHeight, html.EscapeString(r.tip))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="al xl">%s</text>`, f1(labelW+plotW/2), f1(top+plotH+33), html.EscapeString(f.xLabel))
	b.WriteString(`</svg>`)
	return b.String()
}

func forestColor(significant bool) string {
	if significant {
		return forestSolid
	}
	return forestFaint
}

// forestMark is a ratio's mark: a filled square where separated, a
// hollow circle where not.
func forestMark(x, y float64, significant bool) string {
	if significant {
		return fmt.Sprintf(`<rect x="%s" y="%s" width="10" height="10" fill="%s"/>`, f1(x-5), f1(y-5), forestSolid)
	}
	return fmt.Sprintf(`<circle cx="%s" cy="%s" r="5" fill="#fff" stroke="%s" stroke-width="2"/>`, f1(x), f1(y), forestFaint)
}
