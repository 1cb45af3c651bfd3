package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// sideStyle gives each side the same colour in every plot.
var sideStyle = map[string]color.RGBA{
	"slotd":         {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"redis":         {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"redis-cluster": {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"valkey":        {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// plots writes rps.png, p99.png and cpu.png: one panel per load (columns:
// the loads of one pipeline depth; rows: pipeline depths), cores on the x
// axis, one line per side.
func (st *study) plots(rows []row) error {
	metrics := []struct {
		file, title string
		f           func(row) float64
	}{
		{"rps.png", "throughput (requests/s)", func(r row) float64 { return r.rps }},
		{"p99.png", "p99 latency (ms)", func(r row) float64 { return r.p99 }},
		{"cpu.png", "server CPU per request (µs)", func(r row) float64 { return r.cpu }},
	}
	pts := st.o.points()
	cols := len(pts) / len(st.o.pipelines)
	for _, m := range metrics {
		grid := make([][]*plot.Plot, len(st.o.pipelines))
		for i, pt := range pts {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s — %s", pt, m.title)
			p.X.Label.Text = "cores"
			p.X.Min = 0.8
			p.X.Max = float64(st.o.cores[len(st.o.cores)-1]) + 0.2
			p.Y.Min = 0
			p.Y.Tick.Marker = shortTicks{}
			p.X.Tick.Marker = coreTicks(st.o.cores)
			p.Legend.Top = true
			p.Legend.Left = true
			top := 0.0
			for _, side := range []string{"slotd", "redis", "redis-cluster", "valkey"} {
				var xys plotter.XYs
				for _, r := range rows {
					if r.section == "cores" && r.side == side && r.pt == pt {
						xys = append(xys, plotter.XY{X: float64(r.cores), Y: m.f(r)})
						top = max(top, m.f(r))
					}
				}
				if len(xys) == 0 {
					continue
				}
				line, points, err := plotter.NewLinePoints(xys)
				if err != nil {
					return err
				}
				line.Color, points.Color = sideStyle[side], sideStyle[side]
				line.Width = vg.Points(1.5)
				points.Shape = draw.CircleGlyph{}
				p.Add(line, points)
				p.Legend.Add(side, line, points)
			}
			p.Y.Max = top * 1.35 // room for the legend above the lines
			grid[i/cols] = append(grid[i/cols], p)
		}
		img := vgimg.New(vg.Length(cols)*5*vg.Inch, vg.Length(len(grid))*3.6*vg.Inch)
		dc := draw.New(img)
		tiles := draw.Tiles{Rows: len(grid), Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
			PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		canvases := plot.Align(grid, tiles, dc)
		for i := range grid {
			for j := range grid[i] {
				grid[i][j].Draw(canvases[i][j])
			}
		}
		f, err := os.Create(filepath.Join(st.o.out, m.file))
		if err != nil {
			return err
		}
		if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// coreTicks puts a labelled tick at each core count.
func coreTicks(cores []int) plot.Ticker {
	var ticks plot.ConstantTicks
	for _, c := range cores {
		ticks = append(ticks, plot.Tick{Value: float64(c), Label: fmt.Sprint(c)})
	}
	return ticks
}

// shortTicks are the default ticks labelled 750k, 1.2M, 2.5 (no trailing
// zeros).
type shortTicks struct{}

func (shortTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		switch v := t.Value; {
		case v >= 1e6:
			ticks[i].Label = strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
		case v >= 1e3:
			ticks[i].Label = strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
		default:
			ticks[i].Label = strconv.FormatFloat(v, 'g', 3, 64)
		}
	}
	return ticks
}
