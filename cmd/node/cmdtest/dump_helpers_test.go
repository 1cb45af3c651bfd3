package cmdtest_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// Bulk sends a command whose reply must be a bulk string and returns it.
func (rc *respConn) Bulk(args ...string) string {
	rc.t.Helper()
	raw := rc.Do(args...)
	require.True(rc.t, strings.HasPrefix(raw, "$"), "%.100q: %.200q", args, raw)
	i := strings.Index(raw, "\r\n")
	return raw[i+2 : len(raw)-2]
}

// Digest is DEBUG DIGEST-VALUE of one key.
func (rc *respConn) Digest(key string) string {
	rc.t.Helper()
	raw := rc.Do("DEBUG", "DIGEST-VALUE", key)
	require.True(rc.t, strings.HasPrefix(raw, "*1\r\n+"), raw)
	return raw[5 : len(raw)-2]
}

// Encoding is OBJECT ENCODING of key.
func (rc *respConn) Encoding(key string) string {
	rc.t.Helper()
	return rc.Bulk("OBJECT", "ENCODING", key)
}

// dumpRedis starts a real redis-server (DEBUG enabled) for side-by-side
// comparisons; the test is skipped when none is installed.
func dumpRedis(t *testing.T, directives ...string) string {
	args := []string{"--enable-debug-command", "yes"}
	for i := 0; i+1 < len(directives); i += 2 {
		args = append(args, "--"+directives[i], directives[i+1])
	}
	return nodetest.StartRedis(t, args...)
}

// dumpNode starts a slotd node with DEBUG enabled.
func dumpNode(t *testing.T, directives ...string) *nodetest.Node {
	t.Helper()
	return nodetest.Start(t, append([]string{"enable-debug-command", "yes"}, directives...)...)
}

// dumpCase is a value built by commands ("K" stands for the key) on both
// servers.
type dumpCase struct {
	name  string
	build [][]string
	// same: slotd's DUMP of the built value must be byte-identical to
	// Redis's (false where Redis's layout depends on hash-table order or on
	// the history of the value).
	same bool
	// ttl is the TTL the restored copies get ("0": none).
	ttl string
}

// chunked turns cmd + args into commands of at most 500 arguments each.
func chunked(cmd []string, args []string) [][]string {
	var out [][]string
	for len(args) > 0 {
		n := min(500, len(args))
		out = append(out, append(append([]string(nil), cmd...), args[:n]...))
		args = args[n:]
	}
	return out
}

func dumpCases() []dumpCase {
	rnd := func(i int) string { // varied element texts, some integers
		switch i % 7 {
		case 0:
			return strconv.Itoa(i * 37)
		case 1:
			return strconv.Itoa(-i * 1000003)
		case 2:
			return strings.Repeat("x", i%90)
		case 3:
			return "elem:" + strconv.Itoa(i)
		case 4:
			return strconv.Itoa(i) + ".5"
		case 5:
			return strings.Repeat(strconv.Itoa(i%10), 200+i%300)
		}
		return fmt.Sprintf("%x", i*2654435761)
	}
	var many, manyInts, bigElems, fields, zargs, zbig []string
	for i := 0; i < 10000; i++ {
		many = append(many, rnd(i))
	}
	for i := 0; i < 600; i++ {
		manyInts = append(manyInts, strconv.Itoa(i*i-5000))
	}
	for i := 0; i < 30; i++ {
		bigElems = append(bigElems, strings.Repeat(string(rune('a'+i%26)), 9000+i))
	}
	for i := 0; i < 300; i++ {
		fields = append(fields, "field:"+strconv.Itoa(i), rnd(i))
	}
	for i := 0; i < 200; i++ {
		zargs = append(zargs, strconv.FormatFloat(float64(i)/7, 'g', -1, 64), "m"+strconv.Itoa(i))
	}
	for i := 0; i < 1000; i++ {
		zbig = append(zbig, strconv.Itoa(i%50-25)+".25", rnd(i))
	}
	lpush := make([]string, 3000)
	for i := range lpush {
		lpush[i] = strconv.Itoa(i * 11)
	}
	binary := make([]byte, 300)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	return []dumpCase{
		{name: "str", build: [][]string{{"SET", "K", "hello"}}, same: true},
		{name: "str-int", build: [][]string{{"SET", "K", "12345"}}, same: true},
		{name: "str-int32-min", build: [][]string{{"SET", "K", "-2147483648"}}, same: true},
		{name: "str-bigint", build: [][]string{{"SET", "K", "-9223372036854775808"}}, same: true},
		{name: "str-not-canonical", build: [][]string{{"SET", "K", "0012"}}, same: true},
		{name: "str-empty", build: [][]string{{"SET", "K", ""}}, same: true},
		{name: "str-compressible", build: [][]string{{"SET", "K", strings.Repeat("abc", 400)}}, same: true},
		{name: "str-binary", build: [][]string{{"SET", "K", string(binary)}}, same: true},
		{name: "str-ttl", build: [][]string{{"SET", "K", "v", "PX", "100000000"}}, same: true, ttl: "100000000"},
		{name: "list", build: [][]string{{"RPUSH", "K", "a", "b", "1", "2", "300", "-5", "70000", "4294967296"}}, same: true},
		{name: "list-large", build: chunked([]string{"RPUSH", "K"}, many), same: true},
		{name: "list-lpush", build: chunked([]string{"LPUSH", "K"}, lpush)},
		{name: "list-big-elements", build: chunked([]string{"RPUSH", "K"}, bigElems), same: true},
		{name: "set-intset", build: [][]string{{"SADD", "K", "1", "2", "3", "-100", "70000"}}, same: true},
		{name: "set-intset-wide", build: [][]string{{"SADD", "K", "1", "5000000000", "-9223372036854775808"}}, same: true},
		{name: "set-intset-big", build: chunked([]string{"SADD", "K"}, manyInts[:500]), same: true},
		{name: "set-ints-over-limit", build: chunked([]string{"SADD", "K"}, manyInts)},
		{name: "set-strings", build: [][]string{{"SADD", "K", "a", "b", "c", "1"}}},
		{name: "set-large", build: chunked([]string{"SADD", "K"}, many)},
		{name: "hash", build: [][]string{{"HSET", "K", "f1", "v1", "f2", "2", "f3", "hello", "n", "-70000"}}, same: true},
		{name: "hash-long-value", build: [][]string{{"HSET", "K", "f", strings.Repeat("v", 100)}}, same: true},
		{name: "hash-large", build: chunked([]string{"HSET", "K"}, fields)},
		{name: "zset", build: [][]string{{"ZADD", "K", "1", "a", "2.5", "b", "-3", "c", "0.1", "d"}}, same: true},
		{name: "zset-special", build: [][]string{{"ZADD", "K", "inf", "a", "-inf", "b", "-0", "c", "1e300", "d",
			"123456789012", "e", "4503599627370496", "f", "-1.5e-7", "g"}}, same: true},
		{name: "zset-skiplist", build: chunked([]string{"ZADD", "K"}, zargs), same: true},
		{name: "zset-long-member", build: [][]string{{"ZADD", "K", "1", strings.Repeat("m", 100), "-0", "z", "2", "y"}},
			same: true},
		{name: "zset-large", build: chunked([]string{"ZADD", "K"}, zbig), same: true},
		{name: "stream", build: [][]string{{"XADD", "K", "1-1", "a", "1", "b", "2"}, {"XADD", "K", "2-0", "a", "x", "b", "-7"},
			{"XADD", "K", "2-*", "other", strings.Repeat("z", 80)}}, same: true},
		{name: "stream-large", build: streamBuild(600, [][]string{{"XDEL", "K", "5-0", "300-1", "599-0"},
			{"XTRIM", "K", "MAXLEN", "500"}, {"XSETID", "K", "9000-0"}}), same: true},
		{name: "stream-empty", build: [][]string{{"XADD", "K", "5-5", "a", "b"}, {"XDEL", "K", "5-5"}}, same: true},
		// Delivery and seen times follow each server's clock: payloads
		// differ in those bytes, contents do not.
		{name: "stream-groups", build: streamBuild(300, [][]string{{"XGROUP", "CREATE", "K", "g1", "0"},
			{"XGROUP", "CREATE", "K", "g2", "$"}, {"XREADGROUP", "GROUP", "g1", "alice", "COUNT", "20", "STREAMS", "K", ">"},
			{"XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "K", ">"}, {"XACK", "K", "g1", "1-0", "3-1"},
			{"XGROUP", "CREATECONSUMER", "K", "g2", "carol"}, {"XDEL", "K", "2-0"}})},
	}
}

// withKey puts k where a build command says "K" (argument 1 of most
// commands; a later one for XGROUP and XREADGROUP).
func withKey(cmd []string, k string) []string {
	out := append([]string(nil), cmd...)
	for i := 1; i < len(out); i++ {
		if out[i] == "K" {
			out[i] = k
		}
	}
	return out
}

// streamBuild adds n entries (two per millisecond, a varying shape) to
// stream K, then runs more.
func streamBuild(n int, more [][]string) [][]string {
	var b [][]string
	for i := 0; i < n; i++ {
		id := strconv.Itoa(1+i/2) + "-" + strconv.Itoa(i%2)
		if i%5 == 0 {
			b = append(b, []string{"XADD", "K", id, "f", strconv.Itoa(i), "extra", strings.Repeat("e", i%40)})
		} else {
			b = append(b, []string{"XADD", "K", id, "f", strconv.Itoa(i * 7)})
		}
	}
	return append(b, more...)
}

// dumpSame reports (briefly: payloads can be large) where two byte strings
// first differ.
func dumpSame(t *testing.T, want, got string, what string) bool {
	t.Helper()
	if want == got {
		return true
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	t.Errorf("%s: differ at byte %d (lengths %d, %d): want %.60q got %.60q", what, i, len(want), len(got),
		want[i:], got[i:])
	return false
}
