// Package geo owns Redis's geospatial arithmetic: the 52-bit interleaved
// geohash stored as a sorted-set score (so scores are interchangeable
// with Redis's GEOADD), its decoding to a cell centre, the 9-cell area a
// radius or box search scans, haversine distances on Redis's earth
// radius, the 11-character GEOHASH strings, and the number formats of
// Redis's replies.
package geo

import (
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine/types/ld"
)

// Coordinate limits (EPSG:900913): latitudes beyond ±85.05112878 cannot be
// indexed.
const (
	LonMin  = -180.0
	LonMax  = 180.0
	LatMin  = -85.05112878
	LatMax  = 85.05112878
	StepMax = 26 // bits per coordinate

	// EarthRadius is Redis's earth radius in meters.
	EarthRadius = 6372797.560856
	mercatorMax = 20037726.37
)

// degToRad is C's M_PI / 180.0, computed in double arithmetic as Redis's
// compiler does (a Go constant expression would round only once).
var degToRad = func() float64 { pi := math.Pi; return pi / 180.0 }()

// Hash is a geohash of Step bits per coordinate: latitude bits at even
// positions, longitude bits at odd ones.
type Hash struct {
	Bits uint64
	Step uint8
}

func (h Hash) zero() bool { return h.Bits == 0 && h.Step == 0 }

type span struct{ min, max float64 }

var (
	lonSpan = span{LonMin, LonMax}
	latSpan = span{LatMin, LatMax}
)

// spread moves the 32 bits of v to the even bit positions.
func spread(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// squash gathers the even bits of x into 32 bits.
func squash(x uint64) uint32 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}

func encode(lons, lats span, lon, lat float64, step uint8) (Hash, bool) {
	if lon > LonMax || lon < LonMin || lat > LatMax || lat < LatMin {
		return Hash{}, false
	}
	if lat < lats.min || lat > lats.max || lon < lons.min || lon > lons.max {
		return Hash{Step: step}, false
	}
	latOff := (lat - lats.min) / (lats.max - lats.min) * float64(uint64(1)<<step)
	lonOff := (lon - lons.min) / (lons.max - lons.min) * float64(uint64(1)<<step)
	return Hash{Bits: spread(uint32(latOff)) | spread(uint32(lonOff))<<1, Step: step}, true
}

// Encode is the geohash of a point at step bits per coordinate; ok is
// false outside the indexable range.
func Encode(lon, lat float64, step uint8) (Hash, bool) {
	return encode(lonSpan, latSpan, lon, lat, step)
}

// Score is the sorted-set score GEOADD stores for a point.
func Score(lon, lat float64) float64 {
	h, _ := Encode(lon, lat, StepMax)
	return float64(h.align52())
}

func (h Hash) align52() uint64 { return h.Bits << (52 - 2*uint(h.Step)) }

// Area is a geohash cell.
type Area struct {
	Hash           Hash
	LonMin, LonMax float64
	LatMin, LatMax float64
}

func decode(lons, lats span, h Hash) (Area, bool) {
	if h.zero() {
		return Area{}, false
	}
	latI, lonI := squash(h.Bits), squash(h.Bits>>1)
	scale := float64(uint64(1) << h.Step)
	return Area{Hash: h,
		LatMin: lats.min + (float64(latI)/scale)*(lats.max-lats.min),
		LatMax: lats.min + (float64(uint64(latI)+1)/scale)*(lats.max-lats.min),
		LonMin: lons.min + (float64(lonI)/scale)*(lons.max-lons.min),
		LonMax: lons.min + (float64(uint64(lonI)+1)/scale)*(lons.max-lons.min),
	}, true
}

const two63 = 9223372036854775808.0

// Int64 converts a score to an integer as C's (long long) cast does on
// x86-64: truncation, and the "integer indefinite" value for NaN and
// anything out of range (WITHHASH replies it).
func Int64(f float64) int64 {
	if f != f || f >= two63 || f < -two63 {
		return math.MinInt64
	}
	return int64(f)
}

// cUint64 is C's (uint64_t) cast of a double as gcc compiles it for
// x86-64, which Redis uses to turn any score into hash bits (+inf gives 0,
// -inf 2^63, negative values wrap).
func cUint64(f float64) uint64 {
	if f >= two63 {
		return uint64(Int64(f-two63)) ^ 1<<63
	}
	return uint64(Int64(f))
}

// Decode returns the centre of the cell a score stands for; ok is false
// for a score Redis cannot decode.
func Decode(score float64) (lon, lat float64, ok bool) {
	a, ok := decode(lonSpan, latSpan, Hash{Bits: cUint64(score), Step: StepMax})
	if !ok {
		return 0, 0, false
	}
	lon = min(max((a.LonMin+a.LonMax)/2, LonMin), LonMax)
	lat = min(max((a.LatMin+a.LatMax)/2, LatMin), LatMax)
	return lon, lat, true
}

func rad(d float64) float64 { return d * degToRad }
func deg(r float64) float64 { return r / degToRad }

// LatDistance is the distance in meters between two latitudes.
func LatDistance(lat1, lat2 float64) float64 {
	return EarthRadius * math.Abs(rad(lat2)-rad(lat1))
}

// Distance is the haversine distance in meters, as Redis computes it.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := rad(lon1), rad(lon2)
	v := crSin((lon2r - lon1r) / 2)
	if v == 0 {
		return LatDistance(lat1, lat2)
	}
	lat1r, lat2r := rad(lat1), rad(lat2)
	u := crSin((lat2r - lat1r) / 2)
	// Each product rounded on its own, as C evaluates it (no fused
	// multiply-add).
	a := float64(u*u) + float64(float64(float64(crCos(lat1r)*crCos(lat2r))*v)*v)
	return float64(2.0*EarthRadius) * crAsin(math.Sqrt(a))
}

// String is GEOHASH's 11-character base32 text for a score: the point is
// re-encoded over latitudes ±90, as standard geohashes are.
func String(score float64) (string, bool) {
	lon, lat, ok := Decode(score)
	if !ok {
		return "", false
	}
	h, _ := encode(span{-180, 180}, span{-90, 90}, lon, lat, StepMax)
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	var buf [11]byte
	for i := 0; i < 11; i++ {
		idx := 0
		if i < 10 {
			idx = int(h.Bits>>(52-uint((i+1)*5))) & 0x1f
		}
		buf[i] = alphabet[idx]
	}
	return string(buf[:]), true
}

// AppendDistance formats a distance as Redis replies it: rounded (half to
// even) to four decimals, always with four.
func AppendDistance(dst []byte, d float64) []byte {
	if d == 0 {
		return append(dst, "0.0000"...)
	}
	v := math.RoundToEven(d * 10000)
	if math.Abs(v) >= 1<<63 {
		v = math.Copysign(1<<63, v) // llrint's overflow value, printed as its magnitude
	}
	neg := v < 0
	u := uint64(math.Abs(v))
	if neg {
		dst = append(dst, '-')
	}
	s := strconv.AppendUint(nil, u, 10)
	for len(s) < 5 {
		s = append([]byte{'0'}, s...)
	}
	dst = append(dst, s[:len(s)-4]...)
	dst = append(dst, '.')
	return append(dst, s[len(s)-4:]...)
}

// AppendHuman formats a coordinate as Redis's human long double text:
// seventeen decimals, trailing zeros and a bare point removed.
func AppendHuman(dst []byte, f float64) []byte {
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', 17, 64)
	return ld.TrimHuman(dst, start)
}
