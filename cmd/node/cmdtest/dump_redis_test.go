package cmdtest_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/rdb/rdbtest"
)

// TestDumpRestoreCrossServer builds every kind of value the same way on
// redis-server and on slotd, then moves payloads both ways: Redis's DUMP
// into slotd, slotd's DUMP (of what it restored) back into Redis, and
// slotd's own DUMP into both. Every copy must have the original's DEBUG
// DIGEST-VALUE and the encoding Redis gives it, and where the layout is
// deterministic slotd's payload must be byte-identical to Redis's.
func TestDumpRestoreCrossServer(t *testing.T) {
	raddr := dumpRedis(t)
	n := dumpNode(t)
	r := respDial(t, raddr, 2)
	s := respDial(t, n.Addr, 2)
	both := func(args ...string) string {
		t.Helper()
		want := r.Do(args...)
		got := s.Do(args...)
		require.True(t, dumpSame(t, want, got, fmt.Sprintf("%.80q", args)))
		return want
	}
	for _, tc := range dumpCases() {
		k := "dump:" + tc.name
		for _, cmd := range tc.build {
			both(withKey(cmd, k)...)
		}
		orig := r.Digest(k)
		require.Equal(t, orig, s.Digest(k), tc.name)
		require.Equal(t, r.Encoding(k), s.Encoding(k), tc.name)
		fromRedis := r.Bulk("DUMP", k)
		fromSlotd := s.Bulk("DUMP", k)
		if tc.same {
			dumpSame(t, fromRedis, fromSlotd, tc.name+": DUMP")
		}
		ttl := tc.ttl
		if ttl == "" {
			ttl = "0"
		}
		// Redis → slotd (and the same on Redis, as the reference).
		both("RESTORE", k+":r", ttl, fromRedis)
		assert.Equal(t, orig, s.Digest(k+":r"), tc.name)
		assert.Equal(t, r.Encoding(k+":r"), s.Encoding(k+":r"), tc.name)
		// slotd's DUMP of that copy → Redis.
		again := s.Bulk("DUMP", k+":r")
		both("RESTORE", k+":rs", ttl, again)
		assert.Equal(t, orig, r.Digest(k+":rs"), tc.name)
		assert.Equal(t, orig, s.Digest(k+":rs"), tc.name)
		assert.Equal(t, r.Encoding(k+":rs"), s.Encoding(k+":rs"), tc.name)
		// slotd's DUMP of its own value → both.
		both("RESTORE", k+":s", ttl, fromSlotd)
		assert.Equal(t, orig, r.Digest(k+":s"), tc.name)
		assert.Equal(t, orig, s.Digest(k+":s"), tc.name)
		assert.Equal(t, r.Encoding(k+":s"), s.Encoding(k+":s"), tc.name)
		// Contents as a client reads them.
		for _, key := range []string{k + ":r", k + ":rs", k + ":s"} {
			assert.Equal(t, dumpContents(r, key), dumpContents(s, key), "%s %s", tc.name, key)
		}
	}
	// Both datasets now hold the same keys and values.
	assert.Equal(t, r.Do("DEBUG", "DIGEST"), s.Do("DEBUG", "DIGEST"))
	assert.Equal(t, r.Do("DBSIZE"), s.Do("DBSIZE"))
}

// dumpContents reads a value the way a client sees it, in an order that
// does not depend on hash tables.
func dumpContents(c *respConn, key string) string {
	typ := c.Do("TYPE", key)
	switch typ {
	case "+string\r\n":
		return typ + c.Do("GET", key)
	case "+list\r\n":
		return typ + c.Do("LRANGE", key, "0", "-1")
	case "+set\r\n":
		return typ + c.Do("SCARD", key) + c.Do("SINTERCARD", "1", key)
	case "+zset\r\n":
		return typ + c.Do("ZRANGE", key, "0", "-1", "WITHSCORES")
	case "+hash\r\n":
		return typ + c.Do("HLEN", key)
	case "+stream\r\n":
		return typ + c.Do("XRANGE", key, "-", "+") + c.Do("XINFO", "STREAM", key) + c.Do("XINFO", "GROUPS", key)
	}
	return typ
}

// TestRestoreLegacyEncodingsCrossServer RESTOREs payloads in the encodings
// Redis 7.0 reads but no longer writes into both servers: same replies,
// digests and encodings, and slotd's re-DUMP restores in Redis.
func TestRestoreLegacyEncodingsCrossServer(t *testing.T) {
	raddr := dumpRedis(t)
	n := dumpNode(t)
	r := respDial(t, raddr, 3)
	s := respDial(t, n.Addr, 3)
	blob := func(typ byte, b []byte) string {
		e := rdb.NewEncoder(rdb.Options{})
		e.Type(typ)
		e.Bytes(b)
		return string(e.Payload())
	}
	build := func(f func(e *rdb.Encoder)) string {
		e := rdb.NewEncoder(rdb.Options{Compress: true})
		f(e)
		return string(e.Payload())
	}
	entries := []string{"a", "0", "12", "13", "-1", "127", "-128", "300", "-40000", "8000000", "-2000000000",
		"5000000000", "hello", strings.Repeat("x", 63), strings.Repeat("y", 64), strings.Repeat("z", 300), "007"}
	var pairs, bigPairs, intMembers, manyInts []string
	for i := 0; i+1 < len(entries); i += 2 {
		pairs = append(pairs, "f"+entries[i], entries[i+1])
	}
	for i := 0; i < 200; i++ {
		bigPairs = append(bigPairs, "k"+strings.Repeat("q", i%5)+string(rune('A'+i%26))+strings.Repeat("!", i/26), entries[i%len(entries)])
	}
	for i := 0; i < 20; i++ {
		intMembers = append(intMembers, strings.TrimSpace(strings.Repeat(" ", i%2))+string(rune('1'+i%9))+strings.Repeat("0", i/9))
	}
	for i := 0; i < 600; i++ {
		manyInts = append(manyInts, strconv.Itoa(i*7919-100000))
	}
	payloads := map[string]string{
		"list-ziplist": blob(rdb.TypeListZiplist, rdbtest.Ziplist(entries)),
		"list-quicklist-ziplists": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeListQuicklist)
			e.Len(3)
			e.Bytes(rdbtest.Ziplist(entries[:5]))
			e.Bytes(rdbtest.Ziplist(nil))
			e.Bytes(rdbtest.Ziplist(entries[5:]))
		}),
		"list-plain": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeList)
			e.Len(uint64(len(entries)))
			for _, x := range entries {
				e.String(x)
			}
		}),
		"hash-ziplist":       blob(rdb.TypeHashZiplist, rdbtest.Ziplist(pairs)),
		"hash-ziplist-big":   blob(rdb.TypeHashZiplist, rdbtest.Ziplist(bigPairs)),
		"hash-zipmap":        blob(rdb.TypeHashZipmap, rdbtest.Zipmap(pairs)),
		"hash-zipmap-small":  blob(rdb.TypeHashZipmap, rdbtest.Zipmap([]string{"a", "1", "b", "two"})),
		"hash-listpack-long": blob(rdb.TypeHashListpack, listpack(append([]string{"f", strings.Repeat("v", 200)}, pairs...))),
		"hash-dict-small": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeHash)
			e.Len(2)
			for _, x := range []string{"a", "1", "b", "2"} {
				e.String(x)
			}
		}),
		"zset-ziplist": blob(rdb.TypeZSetZiplist, rdbtest.Ziplist([]string{"c", "-3", "a", "1", "b", "2.5", "d", "inf"})),
		"zset-text-scores": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeZSet)
			e.Len(3)
			e.String("a")
			e.B = append(e.B, 4, '1', '.', '2', '5')
			e.String("b")
			e.B = append(e.B, 254)
			e.String("c")
			e.B = append(e.B, 255)
		}),
		"zset2-small": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeZSet2)
			e.Len(2)
			e.String("x")
			e.Double(2)
			e.String("y")
			e.Double(-1.5)
		}),
		"set-dict-ints": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeSet)
			e.Len(uint64(len(intMembers)))
			for _, x := range intMembers {
				e.String(x)
			}
		}),
		"set-dict-many-ints": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeSet)
			e.Len(uint64(len(manyInts)))
			for _, x := range manyInts {
				e.String(x)
			}
		}),
		"set-dict-mixed": build(func(e *rdb.Encoder) {
			e.Type(rdb.TypeSet)
			e.Len(3)
			for _, x := range []string{"1", "b", "3"} {
				e.String(x)
			}
		}),
	}
	for name, p := range payloads {
		k := "legacy:" + name
		want := r.Do("RESTORE", k, "0", p)
		require.Equal(t, "+OK\r\n", want, name)
		require.Equal(t, want, s.Do("RESTORE", k, "0", p), name)
		assert.Equal(t, r.Digest(k), s.Digest(k), name)
		assert.Equal(t, r.Encoding(k), s.Encoding(k), name)
		assert.Equal(t, dumpContents(r, k), dumpContents(s, k), name)
		again := s.Bulk("DUMP", k)
		require.Equal(t, "+OK\r\n", r.Do("RESTORE", k+":s", "0", again), name)
		assert.Equal(t, r.Digest(k), r.Digest(k+":s"), name)
		assert.Equal(t, r.Encoding(k), r.Encoding(k+":s"), name)
	}
}

func listpack(elems []string) []byte {
	lp := rdb.NewListpack()
	for _, x := range elems {
		lp.Append(x)
	}
	return lp.Finish()
}

// TestDumpRestoreErrorsLikeRedis runs RESTORE/DUMP argument, payload and
// option errors on both servers, in both protocols, and compares the raw
// replies.
//
// Redis runs with sanitize-dump-payload yes: slotd always checks payloads
// that deeply (it refuses duplicate hash fields and sorted-set members that
// Redis's default shallow check lets through into listpacks).
func TestDumpRestoreErrorsLikeRedis(t *testing.T) {
	raddr := dumpRedis(t, "sanitize-dump-payload", "yes")
	n := dumpNode(t)
	enc := func(f func(e *rdb.Encoder)) string {
		e := rdb.NewEncoder(rdb.DefaultOptions)
		f(e)
		return string(e.Payload())
	}
	good := enc(func(e *rdb.Encoder) { e.Type(rdb.TypeString); e.String("value") })
	badCRC := good[:len(good)-1] + string(good[len(good)-1]^1)
	newer := good[:len(good)-10] + "\x0b\x00" + good[len(good)-8:] // version 11 (CRC then wrong too)
	corrupt := []string{
		enc(func(e *rdb.Encoder) { e.Type(8); e.String("x") }),
		enc(func(e *rdb.Encoder) { e.Type(rdb.TypeList); e.Len(0) }),
		enc(func(e *rdb.Encoder) { e.Type(rdb.TypeList); e.Len(3); e.String("a") }),
		enc(func(e *rdb.Encoder) { e.Type(rdb.TypeSet); e.Len(2); e.String("a"); e.String("a") }),
		enc(func(e *rdb.Encoder) { e.Type(rdb.TypeSet); e.Len(2); e.String("1"); e.String("1") }),
		enc(func(e *rdb.Encoder) {
			e.Type(rdb.TypeHash)
			e.Len(2)
			e.String("f")
			e.String("1")
			e.String("f")
			e.String("2")
		}),
		enc(func(e *rdb.Encoder) {
			e.Type(rdb.TypeZSet2)
			e.Len(2)
			e.String("m")
			e.Double(1)
			e.String("m")
			e.Double(2)
		}),
		enc(func(e *rdb.Encoder) { e.Type(rdb.TypeHashListpack); e.Bytes(listpack([]string{"a", "b", "c"})[:10]) }),
		enc(func(e *rdb.Encoder) { e.Type(rdb.TypeListQuicklist2); e.Len(1); e.Len(3); e.String("x") }),
		enc(func(e *rdb.Encoder) { e.Type(rdb.TypeSetIntset); e.Bytes([]byte{2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 1, 0}) }),
		"\x00\x05hel",
		"",
		"short",
	}
	script := [][]string{
		{"DUMP", "nokey"},
		{"DUMP"},
		{"DUMP", "a", "b"},
		{"RESTORE", "k"},
		{"RESTORE", "k", "0"},
		{"RESTORE", "k", "abc", good},
		{"RESTORE", "k", "1.5", good},
		{"RESTORE", "k", "-1", good},
		{"RESTORE", "k", "-1", "garbage"},
		{"RESTORE", "k", "0", badCRC},
		{"RESTORE", "k", "0", newer},
		{"RESTORE", "k", "0", good, "IDLETIME", "-1"},
		{"RESTORE", "k", "0", good, "IDLETIME", "x"},
		{"RESTORE", "k", "0", good, "FREQ", "256"},
		{"RESTORE", "k", "0", good, "FREQ", "-1"},
		{"RESTORE", "k", "0", good, "FREQ", "1.0"},
		{"RESTORE", "k", "0", good, "IDLETIME", "5", "FREQ", "5"},
		{"RESTORE", "k", "0", good, "FREQ", "5", "IDLETIME", "5"},
		{"RESTORE", "k", "0", good, "IDLETIME"},
		{"RESTORE", "k", "0", good, "FOO"},
		{"RESTORE", "k", "0", good, "REPLACE", "BAR"},
		{"RESTORE", "k", "0", good},
		{"GET", "k"},
		{"RESTORE", "k", "0", good},
		{"RESTORE", "k", "-1", "garbage"},
		{"RESTORE", "k", "0", good, "replace\x00junk"},
		{"RESTORE", "k", "0", good, "rePlAcE", "IDLETIME", "10", "ABSTTL"},
		{"RESTORE", "k", "1", good, "REPLACE", "ABSTTL"},
		{"EXISTS", "k"},
		{"RESTORE", "k", "0", good, "FREQ", "7", "ABSTTL"},
		{"RESTORE", "k2", "9999999999999", good, "ABSTTL"},
		{"PEXPIRETIME", "k2"},
		{"RESTORE", "k3", "9223372036854775807", good},
		{"EXISTS", "k3"},
		{"RESTORE-ASKING", "k4", "0", good},
		{"RESTORE-ASKING", "k4", "0", good},
		{"RESTORE-ASKING", "k4", "0", good, "REPLACE"},
		{"GET", "k4"},
		{"RESTORE-ASKING", "k5"},
	}
	for _, c := range corrupt {
		script = append(script, []string{"RESTORE", "bad", "0", c})
	}
	script = append(script, []string{"EXISTS", "bad"})
	for _, proto := range []int{2, 3} {
		r := respDial(t, raddr, proto)
		s := respDial(t, n.Addr, proto)
		r.Do("FLUSHALL")
		s.Do("FLUSHALL")
		for _, args := range script {
			assert.Equal(t, r.Do(args...), s.Do(args...), "RESP%d %.80q", proto, args)
		}
	}
}

// TestDumpShapedByConfigLikeRedis: rdbcompression and list-max-listpack-size
// change DUMP payloads on both servers the same way, and the
// hash/zset/set encoding limits decide restored encodings alike.
// dumpPair connects to a redis-server and a slotd node; both runs a command
// on each and requires the same reply, returning it.
func dumpPair(t *testing.T) (r, s *respConn, both func(args ...string) string) {
	raddr := dumpRedis(t)
	n := dumpNode(t)
	r = respDial(t, raddr, 2)
	s = respDial(t, n.Addr, 2)
	both = func(args ...string) string {
		t.Helper()
		want := r.Do(args...)
		require.True(t, dumpSame(t, want, s.Do(args...), fmt.Sprintf("%.80q", args)))
		return want
	}
	return r, s, both
}

func TestDumpShapedByConfigLikeRedis(t *testing.T) {
	r, s, both := dumpPair(t)
	var elems []string
	for i := 0; i < 500; i++ {
		elems = append(elems, strings.Repeat("e", i%40)+string(rune('a'+i%26)))
	}
	both("SET", "s", strings.Repeat("compress me ", 20))
	both("HSET", "h", "a", "1", "b", "2", "c", "3")
	both("ZADD", "z", "1", "a", "2", "b", "3", "c")
	both("SADD", "st", "1", "2", "3", "4")
	for i, cfg := range [][2]string{
		{"rdbcompression", "no"}, {"list-max-listpack-size", "5"}, {"list-max-listpack-size", "-1"},
		{"list-max-listpack-size", "-5"}, {"list-max-listpack-size", "0"}, {"rdbcompression", "yes"},
	} {
		both("CONFIG", "SET", cfg[0], cfg[1])
		// Redis fixes a list's node size when the list is created: build
		// a new one under each setting.
		lk := "l" + strconv.Itoa(i)
		both(append([]string{"RPUSH", lk}, elems...)...)
		for _, k := range []string{lk, "s", "h", "z", "st"} {
			dumpSame(t, r.Bulk("DUMP", k), s.Bulk("DUMP", k), k+" after "+cfg[0]+" "+cfg[1])
		}
	}
	// Limits at restore time.
	ph, pz, pst := r.Bulk("DUMP", "h"), r.Bulk("DUMP", "z"), r.Bulk("DUMP", "st")
	both("CONFIG", "SET", "hash-max-listpack-entries", "2")
	both("CONFIG", "SET", "zset-max-listpack-entries", "2")
	both("CONFIG", "SET", "set-max-intset-entries", "2")
	for _, p := range []string{ph, pz, pst} {
		both("RESTORE", "x", "0", p, "REPLACE")
		assert.Equal(t, r.Encoding("x"), s.Encoding("x"))
		assert.Equal(t, r.Digest("x"), s.Digest("x"))
	}
}

// TestDumpIntsetWidthLikeRedis: an intset keeps the width of the widest
// member it ever held, in DUMP and through RESTORE and COPY, as in Redis.
func TestDumpIntsetWidthLikeRedis(t *testing.T) {
	r, s, both := dumpPair(t)
	for _, wide := range []string{"70000", "-9223372036854775808", "2147483648"} {
		both("DEL", "{i}a", "{i}b", "{i}c")
		both("SADD", "{i}a", "1", "-7", wide, "300")
		both("SREM", "{i}a", wide)
		dumpSame(t, r.Bulk("DUMP", "{i}a"), s.Bulk("DUMP", "{i}a"), "after SREM "+wide)
		both("COPY", "{i}a", "{i}b")
		dumpSame(t, r.Bulk("DUMP", "{i}b"), s.Bulk("DUMP", "{i}b"), "copy")
		p := r.Bulk("DUMP", "{i}a")
		both("RESTORE", "{i}c", "0", p)
		dumpSame(t, r.Bulk("DUMP", "{i}c"), s.Bulk("DUMP", "{i}c"), "restored")
		both("SADD", "{i}c", "5")
		dumpSame(t, r.Bulk("DUMP", "{i}c"), s.Bulk("DUMP", "{i}c"), "restored, then added to")
	}
}

// TestRedisMigratesIntoSlotd: a real redis-server's MIGRATE (which sends
// RESTORE with its own payloads) moves keys of every type into slotd.
func TestRedisMigratesIntoSlotd(t *testing.T) {
	raddr := dumpRedis(t)
	n := dumpNode(t)
	r := respDial(t, raddr, 2)
	s := respDial(t, n.Addr, 2)
	var keys []string
	want := map[string]string{}
	for _, tc := range dumpCases() {
		k := "mig:" + tc.name
		for _, cmd := range tc.build {
			r.Do(withKey(cmd, k)...)
		}
		keys = append(keys, k)
		want[k] = r.Digest(k)
	}
	host, port, _ := strings.Cut(n.Addr, ":")
	require.Equal(t, "+OK\r\n", r.Do(append([]string{"MIGRATE", host, port, "", "0", "10000", "COPY", "KEYS"}, keys...)...))
	for _, k := range keys {
		assert.Equal(t, want[k], s.Digest(k), k)
		assert.Equal(t, r.Encoding(k), s.Encoding(k), k)
	}
	// Without REPLACE the target refuses existing keys; with it they move.
	assert.Equal(t, "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n",
		r.Do("MIGRATE", host, port, keys[0], "0", "10000"))
	require.Equal(t, "+OK\r\n", r.Do(append([]string{"MIGRATE", host, port, "", "0", "10000", "REPLACE", "KEYS"}, keys...)...))
	assert.Equal(t, ":0\r\n", r.Do("DBSIZE"))
	for _, k := range keys {
		assert.Equal(t, want[k], s.Digest(k), k)
	}
	// The TTL travels too.
	pttl := s.Do("PTTL", "mig:str-ttl")
	ms, err := strconv.Atoi(strings.TrimSpace(pttl[1:]))
	require.NoError(t, err, pttl)
	assert.True(t, ms > 90_000_000 && ms <= 100_000_000, pttl)
}
