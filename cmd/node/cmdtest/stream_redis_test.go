package cmdtest_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// szStreamScript is replayed against a real redis-server and slotd, in
// RESP2 and RESP3 (see szRun). IDs are explicit so replies do not depend
// on the clock; idle times are not compared (XPENDING's extended form and
// XINFO CONSUMERS are left out, and their delivery times never show).
var szStreamScript = `
XADD {s}a 1-1 a 1 b 2
XADD {s}a 1-* a 3 b 4
XADD {s}a 2 c 5
XADD {s}a 2-1 a 1 b 2
XADD {s}a 0-1 x y
XADD {s}a 2-1 x y
XADD {s}a 0-0 x y
XADD {s}a 3-0 x
XADD {s}a NOMKSTREAM 4-0 x y
XADD {s}none NOMKSTREAM 4-0 x y
EXISTS {s}none
XADD {s}a MAXLEN 1 MINID 1 5-0 x y
XADD {s}a LIMIT 5 6-0 x y
XADD {s}a MAXLEN 10 LIMIT 5 6-0 x y
XADD {s}a MAXLEN -1 6-0 x y
XADD {s}a MAXLEN ~ 100 LIMIT -1 6-0 x y
XADD {s}a 18446744073709551615-18446744073709551615 last x
XADD {s}b 18446744073709551615-18446744073709551615 x y
XADD {s}b * x y
XADD {s}b 18446744073709551615-* x y
XLEN {s}a
XRANGE {s}a - +
XRANGE {s}a - + COUNT 2
XRANGE {s}a - + COUNT 0
XRANGE {s}a - + COUNT -5
XRANGE {s}a (1-1 (2-1
XRANGE {s}a 2 2
XRANGE {s}a (18446744073709551615-18446744073709551615 +
XRANGE {s}a - (0-0
XRANGE {s}a x +
XRANGE {s}a - + FOO
XREVRANGE {s}a + - COUNT 3
XREVRANGE {s}a (2-1 -
XRANGE {s}nokey - +
XDEL {s}a 1-2 1-2 9-9
XDEL {s}a bad
XINFO STREAM {s}a
XINFO STREAM {s}a FULL
XINFO STREAM {s}a FULL COUNT 1
XINFO STREAM {s}a FULL BAD 1
XINFO STREAM {s}nokey
SET {s}str v
XADD {s}str 1-1 a b
XLEN {s}str
XINFO STREAM {s}str
XTRIM {s}a MAXLEN 2
XTRIM {s}a
XTRIM {s}a MINID = 2-1
XTRIM {s}a MINID ~ 0
XTRIM {s}a LIMIT 10 MAXLEN 1
XRANGE {s}a - +
XSETID {s}a 1-1
XSETID {s}a 19000-0 ENTRIESADDED 1
XSETID {s}a 19000-0 ENTRIESADDED 100 MAXDELETEDID 20000-0
XSETID {s}a 19000-0 ENTRIESADDED 100 MAXDELETEDID 18000-0
XSETID {s}nokey 1-1
XINFO STREAM {s}a
XGROUP CREATE {s}a g1 0
XGROUP CREATE {s}a g1 0
XGROUP CREATE {s}a g2 $ ENTRIESREAD 3
XGROUP CREATE {s}a g3 0 ENTRIESREAD -2
XGROUP CREATE {s}new g 0
XGROUP CREATE {s}new g $ MKSTREAM
XGROUP CREATE {s}a g9 0 FOO
XGROUP CREATECONSUMER {s}a g1 alice
XGROUP CREATECONSUMER {s}a g1 alice
XGROUP CREATECONSUMER {s}a nog alice
XADD {s}c 1-0 f 1
XADD {s}c 2-0 f 2
XADD {s}c 3-0 f 3
XADD {s}c 4-0 f 4 g 5
XGROUP CREATE {s}c g 0
XREADGROUP GROUP g alice COUNT 2 STREAMS {s}c >
XREADGROUP GROUP g bob STREAMS {s}c >
XREADGROUP GROUP g bob STREAMS {s}c >
XREADGROUP GROUP g alice STREAMS {s}c 0
XREADGROUP GROUP g alice COUNT 1 STREAMS {s}c 1
XREADGROUP GROUP nog alice STREAMS {s}c >
XREADGROUP GROUP g alice STREAMS {s}c $
XREADGROUP STREAMS {s}c >
XREAD GROUP g alice STREAMS {s}c >
XREAD STREAMS {s}c >
XREAD STREAMS {s}c
XREAD COUNT 2 STREAMS {s}c {s}a 0 0
XREAD STREAMS {s}c $
XPENDING {s}c g
XPENDING {s}c g - + 10 nobody
XPENDING {s}c nog
XPENDING {s}c g - +
XINFO GROUPS {s}c
XDEL {s}c 2-0
XREADGROUP GROUP g alice STREAMS {s}c 0
XINFO GROUPS {s}c
XCLAIM {s}c g carol 0 1-0 2-0 JUSTID
XCLAIM {s}c g carol 0 1-0 FORCE JUSTID RETRYCOUNT 7
XCLAIM {s}c g carol 0 1-0 BADOPT
XCLAIM {s}c nog carol 0 1-0
XCLAIM {s}c g carol x 1-0
XAUTOCLAIM {s}c g dave 0 0 COUNT 1 JUSTID
XAUTOCLAIM {s}c g dave 0 0 COUNT 10 JUSTID
XAUTOCLAIM {s}c g dave 0 0 COUNT 0
XAUTOCLAIM {s}c g dave 0 (0 JUSTID
XAUTOCLAIM {s}c nog dave 0 0
XPENDING {s}c g
XACK {s}c g 3-0 3-0 4-0 9-9
XACK {s}c g bad
XACK {s}c nog 1-0
XPENDING {s}c g
XGROUP SETID {s}c g 1-0
XGROUP SETID {s}c g $ ENTRIESREAD 2
XGROUP SETID {s}c nog 0
XINFO GROUPS {s}c
XGROUP DELCONSUMER {s}c g dave
XGROUP DELCONSUMER {s}c g nobody
XGROUP DESTROY {s}c g
XGROUP DESTROY {s}c g
XGROUP DESTROY {s}nokey g
XGROUP HELP
XINFO HELP
XGROUP FOO {s}c g
GEOADD {g}a 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEOADD {g}a NX XX 1 2 x
GEOADD {g}a 1 2
GEOADD {g}a 200 2 bad
GEOADD {g}a 1 86 bad
GEOADD {g}a CH 13.361389 38.115556 Palermo 2.2 48.8 Paris
GEOADD {g}a XX 1 1 nope
GEOADD {g}a x 1 a
ZRANGE {g}a 0 -1 WITHSCORES
GEODIST {g}a Palermo Catania
GEODIST {g}a Palermo Catania km
GEODIST {g}a Palermo Catania mi
GEODIST {g}a Palermo Catania ft
GEODIST {g}a Palermo Catania parsec
GEODIST {g}a Palermo nope
GEODIST {g}none a b
GEOHASH {g}a Palermo Catania nope
GEOPOS {g}a Palermo nope Catania Paris
GEOPOS {g}none a
GEOSEARCH {g}a FROMLONLAT 15 37 BYRADIUS 200 km ASC
GEOSEARCH {g}a FROMLONLAT 15 37 BYRADIUS 200 km DESC WITHCOORD WITHDIST WITHHASH
GEOSEARCH {g}a FROMMEMBER Palermo BYBOX 400 400 km ASC WITHDIST
GEOSEARCH {g}a FROMMEMBER Palermo BYRADIUS 4000 km COUNT 1
GEOSEARCH {g}a FROMMEMBER Palermo BYRADIUS 4000 km COUNT 2 ANY
GEOSEARCH {g}a FROMMEMBER Palermo BYRADIUS 4000 km ANY
GEOSEARCH {g}a FROMMEMBER nope BYRADIUS 4000 km
GEOSEARCH {g}a BYRADIUS 4000 km
GEOSEARCH {g}a FROMMEMBER Palermo
GEOSEARCH {g}a FROMMEMBER Palermo FROMLONLAT 1 1 BYRADIUS 1 km
GEOSEARCH {g}a FROMLONLAT 1 1 BYRADIUS -1 km
GEOSEARCH {g}a FROMLONLAT 1 1 BYBOX 1 -1 km
GEOSEARCH {g}a FROMLONLAT 1 1 BYRADIUS 1 parsec
GEOSEARCH {g}a FROMLONLAT 1 1 BYRADIUS x km
GEOSEARCH {g}a FROMLONLAT 1 1 BYRADIUS 1 km COUNT 0
GEOSEARCH {g}none FROMLONLAT 1 1 BYRADIUS 1 km
GEOSEARCHSTORE {g}dst {g}a FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST
ZRANGE {g}dst 0 -1 WITHSCORES
GEOSEARCHSTORE {g}dst {g}a FROMLONLAT 15 37 BYRADIUS 200 km WITHDIST
GEOSEARCHSTORE {g}dst {g}a FROMLONLAT 15 37 BYRADIUS 1 m
EXISTS {g}dst
GEORADIUS {g}a 15 37 200 km WITHDIST ASC
GEORADIUS {g}a 15 37 200 km STORE {g}r
ZRANGE {g}r 0 -1 WITHSCORES
GEORADIUS_RO {g}a 15 37 200 km STORE {g}r
GEORADIUSBYMEMBER {g}a Palermo 200 km WITHCOORD
GEORADIUSBYMEMBER_RO {g}a Palermo 200 km COUNT 1 DESC
GEORADIUSBYMEMBER {g}a nope 200 km
GEORADIUSBYMEMBER {g}none nope 200 km
`

func TestStreamsAndGeoSameAsRedis(t *testing.T) {
	szSameAsRedis(t, strings.Split(strings.TrimSpace(szStreamScript), "\n"))
}

// TestStreamsRandomSameAsRedis plays random stream commands (explicit IDs)
// against both servers with small nodes, comparing every reply and the
// stream's entries and XINFO after each command.
func TestStreamsRandomSameAsRedis(t *testing.T) {
	seed, ops := szSeed(31, 500)
	r := rand.New(rand.NewPCG(seed, 32))
	ms := 1
	fields := []string{"a", "b", "1", "-7", "a"}
	gen := func(_ *respConn) string {
		switch k := r.IntN(20); {
		case k < 8:
			ms += r.IntN(3)
			var fv []string
			for range 1 + r.IntN(3) {
				fv = append(fv, fields[r.IntN(len(fields))], fmt.Sprint(r.IntN(2000)-100))
			}
			trim := ""
			switch r.IntN(6) {
			case 0:
				trim = fmt.Sprintf("MAXLEN ~ %d ", r.IntN(30))
			case 1:
				trim = fmt.Sprintf("MINID %d ", ms-r.IntN(20))
			case 2:
				trim = fmt.Sprintf("MAXLEN ~ %d LIMIT %d ", r.IntN(30), r.IntN(10))
			}
			return fmt.Sprintf("XADD {r}s %s%d-* %s", trim, ms, strings.Join(fv, " "))
		case k < 10:
			return fmt.Sprintf("XDEL {r}s %d-%d %d-0", r.IntN(ms+1), r.IntN(3), r.IntN(ms+1))
		case k < 11:
			return fmt.Sprintf("XTRIM {r}s MAXLEN %s %d", []string{"=", "~"}[r.IntN(2)], r.IntN(40))
		case k < 12:
			return fmt.Sprintf("XTRIM {r}s MINID %s %d", []string{"=", "~"}[r.IntN(2)], r.IntN(ms+1))
		case k < 14:
			return fmt.Sprintf("XRANGE {r}s %d (%d COUNT %d", r.IntN(ms+1), r.IntN(ms+2), r.IntN(6))
		case k < 15:
			return fmt.Sprintf("XREVRANGE {r}s + %d", r.IntN(ms+1))
		case k < 16:
			return "XGROUP CREATE {r}s g " + []string{"0", "$"}[r.IntN(2)]
		case k < 18:
			return fmt.Sprintf("XREADGROUP GROUP g c%d COUNT %d STREAMS {r}s >", r.IntN(3), 1+r.IntN(4))
		case k < 19:
			return fmt.Sprintf("XACK {r}s g %d-0 %d-1", r.IntN(ms+1), r.IntN(ms+1))
		}
		return fmt.Sprintf("XREAD COUNT 3 STREAMS {r}s %d", r.IntN(ms+1))
	}
	raddr, n := szStreamServers(t)
	szRandomRun(t, raddr, n, ops, gen, []string{"{r}s"}, func(k string) []string {
		return []string{"XRANGE " + k + " - +", "XINFO STREAM " + k, "XINFO GROUPS " + k, "XPENDING " + k + " g"}
	})
}

// szStreamServers starts redis-server and slotd with small stream nodes,
// so node boundaries and approximate trimming show.
func szStreamServers(t *testing.T) (raddr, addr string) {
	t.Helper()
	raddr = nodetest.StartRedis(t, "--stream-node-max-entries", "5", "--stream-node-max-bytes", "90")
	return raddr, shardsNode(t, "stream-node-max-entries", "5", "stream-node-max-bytes", "90").Addr
}
