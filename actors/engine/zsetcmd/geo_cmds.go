package zsetcmd

// Geo commands on sorted sets: GEOADD, GEODIST, GEOHASH, GEOPOS,
// GEOSEARCH, GEOSEARCHSTORE and the GEORADIUS family. Points are sorted-set
// members whose scores are 52-bit geohashes (actors/engine/types/geo), the
// same numbers Redis stores, so geo sets move between slotd and Redis as
// plain sorted sets. Searches scan the centre cell and its neighbours as
// Redis does, so unsorted replies list members in Redis's order.

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/types/geo"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
)

func registerGeoCmds() {
	spec := func(name string, arity int, summary, since string, h engine.Handler, flags ...string) *command.Spec {
		return engine.SzSpec("geo", "geo", name, arity, summary, since, h, flags...)
	}
	radiusKeys := func(args [][]byte) ([]int, error) {
		keys := []int{1}
		store := 0
		for i := 5; i < len(args); i++ {
			if (engine.EqFold(args[i], "store") || engine.EqFold(args[i], "storedist")) && i+1 < len(args) {
				store = i + 1
				i++
			}
		}
		if store > 0 {
			keys = append(keys, store)
		}
		return keys, nil
	}
	georadius := spec("georadius", -6, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
		"3.2.0", engine.Handler(func(c *engine.Call) { geoSearch(c, 1, geoFromCoords) }), "write", "denyoom", "movablekeys")
	georadius.Keys = radiusKeys
	bymember := spec("georadiusbymember", -5, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
		"3.2.0", engine.Handler(func(c *engine.Call) { geoSearch(c, 1, geoFromMember) }), "write", "denyoom", "movablekeys")
	bymember.Keys = radiusKeys
	command.Register(
		spec("geoadd", -5, "Add one or more geospatial items in the geospatial index represented using a sorted set",
			"3.2.0", engine.Handler(cmdGeoAdd), "write", "denyoom"),
		spec("geodist", -4, "Returns the distance between two members of a geospatial index", "3.2.0",
			engine.Handler(cmdGeoDist), "readonly"),
		spec("geohash", -2, "Returns members of a geospatial index as standard geohash strings", "3.2.0",
			engine.Handler(cmdGeoHash), "readonly"),
		spec("geopos", -2, "Returns longitude and latitude of members of a geospatial index", "3.2.0",
			engine.Handler(cmdGeoPos), "readonly"),
		spec("geosearch", -7, "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
			"6.2.0", engine.Handler(func(c *engine.Call) { geoSearch(c, 1, geoSearchCmd) }), "readonly"),
		engine.SzKeys(spec("geosearchstore", -8, "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
			"6.2.0", engine.Handler(func(c *engine.Call) { geoSearch(c, 2, geoSearchCmd|geoSearchStore) }), "write", "denyoom"), 1, 2, 1),
		georadius, bymember,
		spec("georadius_ro", -6, "A read-only variant for GEORADIUS", "3.2.10",
			engine.Handler(func(c *engine.Call) { geoSearch(c, 1, geoFromCoords|geoNoStore) }), "readonly"),
		spec("georadiusbymember_ro", -5, "A read-only variant for GEORADIUSBYMEMBER", "3.2.10",
			engine.Handler(func(c *engine.Call) { geoSearch(c, 1, geoFromMember|geoNoStore) }), "readonly"),
	)
}

const (
	geoFromCoords = 1 << iota
	geoFromMember
	geoNoStore
	geoSearchCmd
	geoSearchStore
)

// geoLonLat parses a longitude/latitude pair, replying Redis's errors.
func geoLonLat(c *engine.Call, a, b []byte) (lon, lat float64, ok bool) {
	if lon, ok = parseScoreArg(a); !ok {
		c.W.Error(engine.ErrNotFloat)
		return 0, 0, false
	}
	if lat, ok = parseScoreArg(b); !ok {
		c.W.Error(engine.ErrNotFloat)
		return 0, 0, false
	}
	if lon < geo.LonMin || lon > geo.LonMax || lat < geo.LatMin || lat > geo.LatMax {
		c.W.Error(fmt.Sprintf("ERR invalid longitude,latitude pair %f,%f", lon, lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// geoUnit is the size in meters of a unit argument, or -1 after replying
// an error.
func geoUnit(c *engine.Call, u []byte) float64 {
	switch {
	case engine.EqFold(u, "m"):
		return 1
	case engine.EqFold(u, "km"):
		return 1000
	case engine.EqFold(u, "ft"):
		return 0.3048
	case engine.EqFold(u, "mi"):
		return 1609.34
	}
	c.W.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return -1
}

func geoFloat(c *engine.Call, a []byte, msg string) (float64, bool) {
	v, ok := parseScoreArg(a)
	if !ok {
		c.W.Error("ERR " + msg)
	}
	return v, ok
}

func cmdGeoAdd(c *engine.Call) {
	at := 2
	nx, xx := false, false
	for ; at < len(c.Args); at++ {
		switch o := c.Args[at]; {
		case engine.EqFold(o, "nx"):
			nx = true
		case engine.EqFold(o, "xx"):
			xx = true
		case engine.EqFold(o, "ch"):
		default:
			goto parsed
		}
	}
parsed:
	if (len(c.Args)-at)%3 != 0 || (nx && xx) {
		c.W.Error(engine.ErrSyntax)
		return
	}
	zargs := append([][]byte{[]byte("zadd")}, c.Args[1:at]...)
	for i := at; i < len(c.Args); i += 3 {
		lon, lat, ok := geoLonLat(c, c.Args[i], c.Args[i+1])
		if !ok {
			return
		}
		zargs = append(zargs, strconv.AppendInt(nil, int64(geo.Score(lon, lat)), 10), c.Args[i+2])
	}
	saved := c.Args
	c.Args = zargs
	zadd(c, 0)
	c.Args = saved
}

// geoPoint finds member's coordinates in z.
func geoPoint(z *zset.ZSet, member []byte) (lon, lat float64, ok bool) {
	score, ok := z.Score(member)
	if !ok {
		return 0, 0, false
	}
	return geo.Decode(score)
}

func writeDistance(c *engine.Call, d float64) {
	var buf [32]byte
	c.W.Bulk(geo.AppendDistance(buf[:0], d))
}

// writeCoord replies a coordinate as Redis's human long double: a bulk
// string in RESP2, a double in RESP3.
func writeCoord(c *engine.Call, f float64) {
	var buf [64]byte
	b := geo.AppendHuman(buf[:0], f)
	if c.W.Proto >= 3 {
		c.W.Raw(append(append([]byte{','}, b...), '\r', '\n'))
		return
	}
	c.W.Bulk(b)
}

func cmdGeoDist(c *engine.Call) {
	unit := 1.0
	switch {
	case len(c.Args) == 5:
		if unit = geoUnit(c, c.Args[4]); unit < 0 {
			return
		}
	case len(c.Args) > 5:
		c.W.Error(engine.ErrSyntax)
		return
	}
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	lon1, lat1, ok1 := geoPoint(z, c.Args[2])
	lon2, lat2, ok2 := geoPoint(z, c.Args[3])
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	writeDistance(c, geo.Distance(lon1, lat1, lon2, lat2)/unit)
}

func cmdGeoHash(c *engine.Call) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		var score float64
		found := false
		if z != nil {
			score, found = z.Score(m)
		}
		if !found {
			c.W.Null()
			continue
		}
		if s, ok := geo.String(score); ok {
			c.W.BulkString(s)
		} else {
			c.W.Null()
		}
	}
}

func cmdGeoPos(c *engine.Call) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		var lon, lat float64
		found := false
		if z != nil {
			lon, lat, found = geoPoint(z, m)
		}
		if !found {
			c.W.NullArray()
			continue
		}
		c.W.Array(2)
		writeCoord(c, lon)
		writeCoord(c, lat)
	}
}

type geoHit struct {
	member         string
	lon, lat, dist float64
	score          float64
}

// geoSearch is Redis's georadiusGeneric: src is the source key's index.
func geoSearch(c *engine.Call, src int, flags int) {
	args := c.Args
	z, ok := zsetRead(c, args[src])
	if !ok {
		return
	}
	var storeKey []byte
	storeDist := false
	var shape geo.Shape
	base := 0
	switch {
	case flags&geoFromCoords != 0:
		base = 6
		if shape.Lon, shape.Lat, ok = geoLonLat(c, args[2], args[3]); !ok {
			return
		}
		if !geoRadiusArgs(c, args[4:6], &shape) {
			return
		}
	case flags&geoFromMember != 0 && z == nil:
		base = 5
	case flags&geoFromMember != 0:
		base = 5
		if shape.Lon, shape.Lat, ok = geoPoint(z, args[2]); !ok {
			c.W.Error("ERR could not decode requested zset member")
			return
		}
		if !geoRadiusArgs(c, args[3:5], &shape) {
			return
		}
	default:
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			storeKey = args[1]
		}
	}
	withDist, withHash, withCoord := false, false, false
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	sortDir, any := 0, false
	var count int64
	search, store := flags&geoSearchCmd != 0, flags&geoSearchStore != 0
	rest := args[base:]
	for i := 0; i < len(rest); i++ {
		a, left := rest[i], len(rest)-i-1
		switch {
		case engine.EqFold(a, "withdist"):
			withDist = true
		case engine.EqFold(a, "withhash"):
			withHash = true
		case engine.EqFold(a, "withcoord"):
			withCoord = true
		case engine.EqFold(a, "any"):
			any = true
		case engine.EqFold(a, "asc"):
			sortDir = 1
		case engine.EqFold(a, "desc"):
			sortDir = -1
		case engine.EqFold(a, "count") && left >= 1:
			n, ok := c.IntArg(rest[i+1])
			if !ok {
				return
			}
			if n <= 0 {
				c.W.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case (engine.EqFold(a, "store") || engine.EqFold(a, "storedist")) && left >= 1 && flags&geoNoStore == 0 && !search:
			storeKey, storeDist = rest[i+1], engine.EqFold(a, "storedist")
			i++
		case engine.EqFold(a, "storedist") && search && store:
			storeDist = true
		case engine.EqFold(a, "frommember") && left >= 1 && search && !fromLoc:
			if z != nil {
				if shape.Lon, shape.Lat, ok = geoPoint(z, rest[i+1]); !ok {
					c.W.Error("ERR could not decode requested zset member")
					return
				}
			}
			fromMember = true
			i++
		case engine.EqFold(a, "fromlonlat") && left >= 2 && search && !fromMember:
			if shape.Lon, shape.Lat, ok = geoLonLat(c, rest[i+1], rest[i+2]); !ok {
				return
			}
			fromLoc = true
			i += 2
		case engine.EqFold(a, "byradius") && left >= 2 && search && !byBox:
			if !geoRadiusArgs(c, rest[i+1:i+3], &shape) {
				return
			}
			byRadius = true
			i += 2
		case engine.EqFold(a, "bybox") && left >= 3 && search && !byRadius:
			w, ok := geoFloat(c, rest[i+1], "need numeric width")
			if !ok {
				return
			}
			h, ok := geoFloat(c, rest[i+2], "need numeric height")
			if !ok {
				return
			}
			if h < 0 || w < 0 {
				c.W.Error("ERR height or width cannot be negative")
				return
			}
			if shape.Unit = geoUnit(c, rest[i+3]); shape.Unit < 0 {
				return
			}
			shape.Box, shape.Width, shape.Height = true, w, h
			byBox = true
			i += 3
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if store {
			what = "GEOSEARCHSTORE"
		}
		c.W.Error("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if search && !(fromMember || fromLoc) {
		c.W.Error(fmt.Sprintf("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s", args[0]))
		return
	}
	if search && !(byRadius || byBox) {
		c.W.Error(fmt.Sprintf("ERR exactly one of BYRADIUS and BYBOX can be specified for %s", args[0]))
		return
	}
	if any && count == 0 {
		c.W.Error("ERR the ANY argument requires COUNT argument")
		return
	}
	c.Unchanged() // only a STORE destination is written (and signalled)
	if z == nil {
		if storeKey != nil {
			c.SzDeleteDst(storeKey)
			c.W.Int(0)
		} else {
			c.W.Array(0)
		}
		return
	}
	if count != 0 && sortDir == 0 && !any {
		sortDir = 1
	}
	limit := 0
	if any {
		limit = int(count)
	}
	hits := geoScan(z, &shape, limit)
	if len(hits) == 0 && storeKey == nil {
		c.W.Array(0)
		return
	}
	n := len(hits)
	if count != 0 && int64(n) > count {
		n = int(count)
	}
	if sortDir != 0 {
		sort.SliceStable(hits, func(i, j int) bool {
			if sortDir > 0 {
				return hits[i].dist < hits[j].dist
			}
			return hits[i].dist > hits[j].dist
		})
	}
	hits = hits[:n]
	if storeKey == nil {
		opts := 0
		for _, w := range []bool{withDist, withHash, withCoord} {
			if w {
				opts++
			}
		}
		c.W.Array(n)
		for _, h := range hits {
			if opts > 0 {
				c.W.Array(opts + 1)
			}
			c.W.BulkString(h.member)
			if withDist {
				writeDistance(c, h.dist/shape.Unit)
			}
			if withHash {
				c.W.Int(geo.Int64(h.score))
			}
			if withCoord {
				c.W.Array(2)
				writeCoord(c, h.lon)
				writeCoord(c, h.lat)
			}
		}
		return
	}
	if n == 0 {
		c.SzDeleteDst(storeKey)
		c.W.Int(0)
		return
	}
	res := zset.New(false)
	maxLen := 0
	for _, h := range hits {
		score := h.score
		if storeDist {
			score = h.dist / shape.Unit
		}
		res.AddString(h.member, score)
		maxLen = max(maxLen, len(h.member))
	}
	event := "georadiusstore"
	if search {
		event = "geosearchstore"
	}
	zsetStoreResult(c, storeKey, res, maxLen, event)
}

// geoRadiusArgs parses "<radius> <unit>".
func geoRadiusArgs(c *engine.Call, a [][]byte, shape *geo.Shape) bool {
	r, ok := geoFloat(c, a[0], "need numeric radius")
	if !ok {
		return false
	}
	if r < 0 {
		c.W.Error("ERR radius cannot be negative")
		return false
	}
	if shape.Unit = geoUnit(c, a[1]); shape.Unit < 0 {
		return false
	}
	shape.Box, shape.Radius = false, r
	return true
}

// geoScan collects the members of z inside shape, cell by cell in Redis's
// order, stopping at limit hits when limit > 0 (ANY).
func geoScan(z *zset.ZSet, shape *geo.Shape, limit int) []geoHit {
	cells := shape.Areas()
	var hits []geoHit
	last := 0
	for i := range cells {
		if cells.Skip(i, last) {
			continue
		}
		if limit > 0 && len(hits) >= limit {
			break
		}
		lo, hi := geo.ScoreRange(cells[i])
		r := zset.ScoreRange{Min: lo, Max: hi, MaxEx: true}
		for n := z.FirstInRange(r); n != nil && r.LteMax(n.Score()); n = n.Next() {
			if lon, lat, d, ok := shape.Within(n.Score()); ok {
				hits = append(hits, geoHit{member: n.Member(), lon: lon, lat: lat, dist: d, score: n.Score()})
			}
			if limit > 0 && len(hits) >= limit {
				break
			}
		}
		last = i
	}
	return hits
}
