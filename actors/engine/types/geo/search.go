package geo

import "math"

// Shape is a search area: a circle of Radius or a Width×Height box around
// (Lon, Lat), the sizes in Unit-meters (the unit's size in meters).
type Shape struct {
	Lon, Lat      float64
	Box           bool
	Radius        float64
	Width, Height float64
	Unit          float64
}

// bounds is Redis's bounding box of the shape: min lon, min lat, max lon,
// max lat.
func (s *Shape) bounds() [4]float64 {
	h, w := s.Unit*s.Radius, s.Unit*s.Radius
	if s.Box {
		h, w = s.Unit*s.Height/2, s.Unit*s.Width/2
	}
	latDelta := deg(h / EarthRadius)
	top := deg(w / EarthRadius / math.Cos(rad(s.Lat+latDelta)))
	bottom := deg(w / EarthRadius / math.Cos(rad(s.Lat-latDelta)))
	var b [4]float64
	if s.Lat < 0 {
		b[0], b[2] = s.Lon-bottom, s.Lon+bottom
	} else {
		b[0], b[2] = s.Lon-top, s.Lon+top
	}
	b[1], b[3] = s.Lat-latDelta, s.Lat+latDelta
	return b
}

// stepsFor is the geohash precision whose cells suit a search radius.
func stepsFor(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

func (h Hash) moveX(d int) Hash {
	if d == 0 {
		return h
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - 2*uint(h.Step))
	if d > 0 {
		x += zz + 1
	} else {
		x |= zz
		x -= zz + 1
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - 2*uint(h.Step))
	return Hash{Bits: x | y, Step: h.Step}
}

func (h Hash) moveY(d int) Hash {
	if d == 0 {
		return h
	}
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - 2*uint(h.Step))
	if d > 0 {
		y += zz + 1
	} else {
		y |= zz
		y -= zz + 1
	}
	y &= 0x5555555555555555 >> (64 - 2*uint(h.Step))
	return Hash{Bits: x | y, Step: h.Step}
}

// Cells are the centre cell and its neighbours in Redis's scan order:
// centre, north, south, east, west, north-east, north-west, south-east,
// south-west. A neighbour the search cannot reach is the zero Hash.
type Cells [9]Hash

func neighbours(h Hash) Cells {
	return Cells{h, h.moveY(1), h.moveY(-1), h.moveX(1), h.moveX(-1),
		h.moveX(1).moveY(1), h.moveX(-1).moveY(1), h.moveX(1).moveY(-1), h.moveX(-1).moveY(-1)}
}

// Areas returns the cells a search over s scans, as Redis's
// geohashCalculateAreasByShapeWGS84 chooses them.
func (s *Shape) Areas() Cells {
	b := s.bounds()
	r := s.Radius
	if s.Box {
		r = math.Sqrt((s.Width/2)*(s.Width/2) + (s.Height/2)*(s.Height/2))
	}
	steps := stepsFor(r*s.Unit, s.Lat)
	hash, _ := Encode(s.Lon, s.Lat, steps)
	cells := neighbours(hash)
	area, _ := decode(lonSpan, latSpan, hash)
	north, _ := decode(lonSpan, latSpan, cells[1])
	south, _ := decode(lonSpan, latSpan, cells[2])
	east, _ := decode(lonSpan, latSpan, cells[3])
	west, _ := decode(lonSpan, latSpan, cells[4])
	if steps > 1 && (north.LatMax < b[3] || south.LatMin > b[1] || east.LonMax < b[2] || west.LonMin > b[0]) {
		steps--
		hash, _ = Encode(s.Lon, s.Lat, steps)
		cells = neighbours(hash)
		area, _ = decode(lonSpan, latSpan, hash)
	}
	if steps >= 2 {
		if area.LatMin < b[1] {
			cells[2], cells[7], cells[8] = Hash{}, Hash{}, Hash{}
		}
		if area.LatMax > b[3] {
			cells[1], cells[5], cells[6] = Hash{}, Hash{}, Hash{}
		}
		if area.LonMin < b[0] {
			cells[4], cells[8], cells[6] = Hash{}, Hash{}, Hash{}
		}
		if area.LonMax > b[2] {
			cells[3], cells[7], cells[5] = Hash{}, Hash{}, Hash{}
		}
	}
	return cells
}

// ScoreRange is the score interval [min, max) of the points in cell h.
func ScoreRange(h Hash) (lo, hi float64) {
	lo = float64(h.align52())
	h.Bits++
	return lo, float64(h.align52())
}

// Skip reports whether cell i of cells is scanned no more: zero, or the
// same as the last cell scanned (huge radii make neighbours repeat).
func (cells *Cells) Skip(i, lastScanned int) bool {
	if cells[i].zero() {
		return true
	}
	return lastScanned > 0 && cells[i] == cells[lastScanned]
}

// Within decodes a score and reports whether the point lies in s, with its
// coordinates and its distance in meters from the centre.
func (s *Shape) Within(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat, ok = Decode(score)
	if !ok {
		return 0, 0, 0, false
	}
	if !s.Box {
		dist = Distance(s.Lon, s.Lat, lon, lat)
		return lon, lat, dist, dist <= s.Radius*s.Unit
	}
	if LatDistance(lat, s.Lat) > s.Height*s.Unit/2 {
		return lon, lat, 0, false
	}
	if Distance(lon, lat, s.Lon, lat) > s.Width*s.Unit/2 {
		return lon, lat, 0, false
	}
	return lon, lat, Distance(s.Lon, s.Lat, lon, lat), true
}
