package console

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden/stats"
)

// Charts are inline SVG drawn here, server-side: no chart library, no
// script. Colours come from the stylesheet, by class.

// Geometry of the time charts: a plot area inside margins.
const (
	chartW, chartH        = 720.0, 200.0
	marginL, marginR      = 56.0, 8.0
	marginT, marginB      = 10.0, 24.0
	plotW, plotH          = chartW - marginL - marginR, chartH - marginT - marginB
	hbarW, hbarRow, hbarL = 720.0, 26.0, 260.0
)

// rect is one bar of a chart.
type rect struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// label is a text on a chart.
type label struct {
	X, Y   float64
	Text   string
	Anchor string // start, middle, end
}

// series is one line of a line chart.
type series struct {
	Class, Name string
	// Paths are the line's segments (a minute without data breaks it);
	// Dots the points that stand alone.
	Paths []string
	Dots  []point
}

type point struct{ X, Y float64 }

// chart is a time chart: stacked bars or lines over the last hour.
type chart struct {
	Title, Unit  string
	W, H         float64
	Bars         []rect
	Lines        []series
	Labels       []label
	Grid         []float64 // y of the horizontal grid lines
	Legend       []legendItem
	PlotX, PlotY float64
	PlotW, PlotH float64
	Empty        bool
	AriaLabel    string
}

// PlotRight is the x of the plot area's right edge.
func (c *chart) PlotRight() float64 { return c.PlotX + c.PlotW }

// PlotMidX is the x of the plot area's middle.
func (c *chart) PlotMidX() float64 { return c.PlotX + c.PlotW/2 }

type legendItem struct{ Class, Name string }

// hbars is a horizontal bar chart of the top counts.
type hbars struct {
	Title string
	W, H  float64
	Bars  []rect
	Names []label
	Nums  []label
	Empty bool
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func newChart(title, unit string) *chart {
	return &chart{Title: title, Unit: unit, W: chartW, H: chartH, PlotX: marginL, PlotY: marginT, PlotW: plotW, PlotH: plotH}
}

// axes adds the y grid with labels up to ymax, and the time labels of n
// points ending now.
func (c *chart) axes(ymax float64, format func(float64) string, pts []stats.Point) {
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		y := marginT + plotH - plotH*float64(i)/4
		c.Grid = append(c.Grid, y)
		c.Labels = append(c.Labels, label{X: marginL - 6, Y: y + 4, Text: format(v), Anchor: "end"})
	}
	n := len(pts)
	for k, i := range []int{0, n / 2, n - 1} {
		if n == 0 {
			break
		}
		x := marginL + plotW*(float64(i)+0.5)/float64(n)
		text := pts[i].Time.Format("15:04") + "Z"
		c.Labels = append(c.Labels, label{X: x, Y: chartH - 6, Text: text, Anchor: []string{"start", "middle", "end"}[k]})
	}
}

// outcomeOrder is the stacking order of the outcomes, bottom up.
var outcomeOrder = []int{stats.Allow, stats.Modify, stats.Ask, stats.Defer, stats.Deny, stats.Error}

// rateChart is decisions per second by outcome, one stacked bar a minute.
func rateChart(pts []stats.Point) *chart {
	c := newChart("Decisions per second, by outcome", "/s")
	var most float64
	for _, p := range pts {
		most = max(most, float64(p.Outcomes.Total())/60)
	}
	c.Empty = most == 0
	ymax := niceMax(most)
	c.axes(ymax, func(v float64) string { return trimFloat(v) }, pts)
	bw := plotW / float64(len(pts))
	for i, p := range pts {
		y := marginT + plotH
		for _, oc := range outcomeOrder {
			n := p.Outcomes[oc]
			if n == 0 {
				continue
			}
			h := plotH * float64(n) / 60 / ymax
			y -= h
			c.Bars = append(c.Bars, rect{X: marginL + float64(i)*bw + 0.5, Y: y, W: max(bw-1, 1), H: h,
				Class: "o-" + stats.OutcomeNames[oc],
				Title: fmt.Sprintf("%s: %d %s (%s/s)", p.Time.Format("15:04Z"), n, stats.OutcomeNames[oc], trimFloat(float64(n)/60))})
		}
	}
	for _, oc := range outcomeOrder {
		c.Legend = append(c.Legend, legendItem{"o-" + stats.OutcomeNames[oc], stats.OutcomeNames[oc]})
	}
	c.AriaLabel = "decisions per second by outcome over the last hour"
	return c
}

// latencyChart is p50 and p99 decision latency, a point a minute.
func latencyChart(pts []stats.Point) *chart {
	c := newChart("Decision latency, p50 and p99", "")
	var most time.Duration
	for _, p := range pts {
		most = max(most, p.P99)
	}
	c.Empty = most == 0
	ymax := niceMax(float64(most / time.Microsecond))
	c.axes(ymax, func(v float64) string { return fmtDuration(time.Duration(v) * time.Microsecond) }, pts)
	bw := plotW / float64(len(pts))
	line := func(class, name string, get func(stats.Point) time.Duration) {
		s := series{Class: class, Name: name}
		var cur []string
		var last point
		flush := func() {
			switch {
			case len(cur) == 1:
				s.Dots = append(s.Dots, last)
			case len(cur) > 1:
				s.Paths = append(s.Paths, strings.Join(cur, " "))
			}
			cur = nil
		}
		for i, p := range pts {
			if p.Outcomes.Total() == 0 {
				flush()
				continue
			}
			x := marginL + bw*(float64(i)+0.5)
			y := marginT + plotH - plotH*float64(get(p)/time.Microsecond)/ymax
			cur = append(cur, fmt.Sprintf("%.1f,%.1f", x, y))
			last = point{x, y}
		}
		flush()
		c.Lines = append(c.Lines, s)
		c.Legend = append(c.Legend, legendItem{class, name})
	}
	line("l-p50", "p50", func(p stats.Point) time.Duration { return p.P50 })
	line("l-p99", "p99", func(p stats.Point) time.Duration { return p.P99 })
	c.AriaLabel = "p50 and p99 decision latency over the last hour"
	return c
}

// pendingChart is the number of pending approvals at the end of each
// minute, from the approvals created in the window (and before it, while
// still listed).
func pendingChart(pts []stats.Point, approvals []approval.Approval) *chart {
	c := newChart("Pending approvals", "")
	counts := make([]int, len(pts))
	most := 0
	for i, p := range pts {
		end := p.Time.Add(time.Minute)
		for _, a := range approvals {
			if a.Created.Before(end) && (a.DecidedAt.IsZero() || !a.DecidedAt.Before(end)) {
				counts[i]++
			}
		}
		most = max(most, counts[i])
	}
	c.Empty = most == 0
	ymax := niceMax(float64(most))
	c.axes(ymax, func(v float64) string { return trimFloat(v) }, pts)
	bw := plotW / float64(len(pts))
	for i, n := range counts {
		if n == 0 {
			continue
		}
		h := plotH * float64(n) / ymax
		c.Bars = append(c.Bars, rect{X: marginL + float64(i)*bw + 0.5, Y: marginT + plotH - h, W: max(bw-1, 1), H: h,
			Class: "o-ask", Title: fmt.Sprintf("%s: %d pending", pts[i].Time.Format("15:04Z"), n)})
	}
	c.AriaLabel = "pending approvals over the last hour"
	return c
}

// topChart is a horizontal bar chart of counts, largest first.
func topChart(title string, counts []stats.Count, class string) *hbars {
	h := &hbars{Title: title, W: hbarW, Empty: len(counts) == 0}
	h.H = max(float64(len(counts))*hbarRow, hbarRow)
	var most uint64
	for _, c := range counts {
		most = max(most, c.N)
	}
	for i, c := range counts {
		y := float64(i) * hbarRow
		w := (hbarW - hbarL - 60) * float64(c.N) / float64(max(most, 1))
		h.Bars = append(h.Bars, rect{X: hbarL, Y: y + 4, W: max(w, 1), H: hbarRow - 8, Class: class, Title: fmt.Sprintf("%s: %d", c.Key, c.N)})
		h.Names = append(h.Names, label{X: hbarL - 8, Y: y + hbarRow/2 + 4, Text: cut(c.Key, 36), Anchor: "end"})
		h.Nums = append(h.Nums, label{X: hbarL + w + 6, Y: y + hbarRow/2 + 4, Text: fmt.Sprint(c.N), Anchor: "start"})
	}
	return h
}

// trimFloat formats a chart value with three significant digits at most.
func trimFloat(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100 || v <= -100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
