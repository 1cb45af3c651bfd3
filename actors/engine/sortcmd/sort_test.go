package sortcmd_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/enginetest"
	"github.com/slotd/slotd/netio/command"
)

func newClient(t *testing.T) *enginetest.Client {
	t.Helper()
	enginetest.Register()
	return enginetest.New(enginetest.Options{Seed: 1}).Client(2)
}

func arr(elems ...string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(elems)) + "\r\n")
	for _, e := range elems {
		if e == "<nil>" {
			b.WriteString("$-1\r\n")
			continue
		}
		b.WriteString("$" + strconv.Itoa(len(e)) + "\r\n" + e + "\r\n")
	}
	return b.String()
}

func errReply(s string) string { return "-" + s + "\r\n" }
func intReply(n int) string    { return ":" + strconv.Itoa(n) + "\r\n" }

// SORT's options and replies, as redis-server 7.0.15 answers them
// (recorded side by side; cmd/node/cmdtest compares them live). The engine
// holds every slot in one shard, so pattern keys and the destination may
// hash anywhere.
func TestSortOptions(t *testing.T) {
	n := newClient(t)
	n.Do("RPUSH", "l", "3", "1", "2", "10", "-5", "1.5")
	assert.Equal(t, arr("-5", "1", "1.5", "2", "3", "10"), n.Do("SORT", "l"))
	assert.Equal(t, arr("10", "3", "2", "1.5", "1", "-5"), n.Do("SORT", "l", "DESC"))
	assert.Equal(t, arr("-5", "1", "1.5", "10", "2", "3"), n.Do("SORT", "l", "ALPHA"))
	assert.Equal(t, arr("2", "10"), n.Do("sort", "l", "alpha", "desc", "limit", "1", "2"))
	assert.Equal(t, arr("-5", "1"), n.Do("SORT", "l", "LIMIT", "-1", "2"))
	assert.Equal(t, arr(), n.Do("SORT", "l", "LIMIT", "10", "1"))
	assert.Equal(t, arr(), n.Do("SORT", "l", "LIMIT", "0", "0"))
	assert.Equal(t, errReply(engine.ErrNotInt), n.Do("SORT", "l", "LIMIT", "a", "1"))
	assert.Equal(t, errReply(engine.ErrSyntax), n.Do("SORT", "l", "LIMIT", "1"))
	assert.Equal(t, errReply(engine.ErrSyntax), n.Do("SORT", "l", "GET"))
	assert.Equal(t, errReply(engine.ErrSyntax), n.Do("SORT_RO", "l", "STORE", "x"))

	// BY without '*': the list's own order, LIMIT and DESC on it.
	assert.Equal(t, arr("3", "1", "2", "10", "-5", "1.5"), n.Do("SORT", "l", "BY", "nosort"))
	assert.Equal(t, arr("1.5", "-5", "10", "2", "1", "3"), n.Do("SORT", "l", "BY", "nosort", "DESC"))
	assert.Equal(t, arr("1", "2"), n.Do("SORT", "l", "BY", "nosort", "LIMIT", "1", "2"))
	assert.Equal(t, arr("-5", "10"), n.Do("SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"))

	// BY and GET patterns: keys, hash fields, '#', constants.
	for _, kv := range [][2]string{{"w_3", "30"}, {"w_1", "10"}, {"w_2", "20"}, {"w_10", "5"}, {"w_-5", "100"}} {
		n.Do("SET", kv[0], kv[1]) // an in-process Client does not split MSET over slots
	}
	n.Do("HSET", "h_1", "f", "9")
	n.Do("HSET", "h_3", "f", "1")
	assert.Equal(t, arr("1.5", "10", "1", "2", "3", "-5"), n.Do("SORT", "l", "BY", "w_*"))
	assert.Equal(t, arr("-5", "100", "3", "30", "2", "20"),
		n.Do("SORT", "l", "BY", "w_*", "DESC", "GET", "#", "GET", "w_*", "LIMIT", "0", "3"))
	assert.Equal(t, arr("<nil>", "10", "<nil>", "1"), n.Do("SORT", "l", "BY", "w_*", "GET", "nokey", "GET", "#",
		"LIMIT", "1", "2"), "GET of a constant is nil")
	assert.Equal(t, arr("-5", "1.5", "10", "2", "3", "1"), n.Do("SORT", "l", "BY", "h_*->f"))
	assert.Equal(t, arr("3", "1"), n.Do("SORT", "l", "BY", "h_*->f", "ALPHA", "LIMIT", "4", "2"))
	n.Do("SET", "x:a->", "100")
	n.Do("RPUSH", "one", "a")
	assert.Equal(t, arr("100"), n.Do("SORT", "one", "BY", "num", "GET", "x:*->"), "a trailing -> is no field")

	// STORE: a list (replacing any value and TTL), empty results delete.
	assert.Equal(t, intReply(6), n.Do("SORT", "l", "BY", "w_*", "GET", "w_*", "STORE", "dst"))
	assert.Equal(t, arr("", "5", "10", "20", "30", "100"), n.Do("LRANGE", "dst", "0", "-1"))
	assert.Equal(t, intReply(0), n.Do("SORT", "l", "LIMIT", "10", "10", "STORE", "dst"))
	assert.Equal(t, intReply(0), n.Do("EXISTS", "dst"))
	n.Do("SET", "dst", "x", "EX", "100")
	assert.Equal(t, intReply(2), n.Do("SORT", "l", "LIMIT", "0", "2", "STORE", "dst"))
	assert.Equal(t, intReply(-1), n.Do("TTL", "dst"), "the TTL goes with the old value")
	assert.Equal(t, enginetest.Bulk("quicklist"), n.Do("OBJECT", "ENCODING", "dst"))

	// Sets and sorted sets; a set stored BY nosort is sorted ALPHA.
	n.Do("SADD", "s", "b", "a", "c", "1")
	assert.Equal(t, errReply("ERR One or more scores can't be converted into double"), n.Do("SORT", "s"))
	assert.Equal(t, arr("1", "a", "b", "c"), n.Do("SORT", "s", "ALPHA"))
	assert.Equal(t, intReply(4), n.Do("SORT", "s", "BY", "nosort", "STORE", "sd"))
	assert.Equal(t, arr("1", "a", "b", "c"), n.Do("LRANGE", "sd", "0", "-1"))
	n.Do("ZADD", "z", "1", "a", "5", "b", "2", "c", "10", "d", "3", "e")
	assert.Equal(t, enginetest.Bulk("listpack"), n.Do("OBJECT", "ENCODING", "z"))
	assert.Equal(t, arr("a", "c", "e", "b", "d"), n.Do("SORT", "z", "BY", "nosort"))
	assert.Equal(t, arr("d", "b", "e", "c", "a"), n.Do("SORT", "z", "BY", "nosort", "DESC"))
	assert.Equal(t, arr("c", "e"), n.Do("SORT", "z", "BY", "nosort", "LIMIT", "1", "2"))
	assert.Equal(t, arr("b", "e"), n.Do("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"))
	assert.Equal(t, arr(), n.Do("SORT", "z", "BY", "nosort", "LIMIT", "5", "10"))
	assert.Equal(t, arr("e", "d", "c", "b", "a"), n.Do("SORT", "z", "ALPHA", "DESC"))
	assert.Equal(t, enginetest.Bulk("skiplist"), n.Do("OBJECT", "ENCODING", "z"), "SORT converts a sorted set, as Redis")

	// Numbers as strtod reads them; the wrong type.
	n.Do("RPUSH", "e", "", " 1", "0x1A", "inf", "-inf")
	assert.Equal(t, arr("-inf", "", " 1", "0x1A", "inf"), n.Do("SORT", "e"))
	n.Do("RPUSH", "e", "1 ")
	assert.Equal(t, errReply("ERR One or more scores can't be converted into double"), n.Do("SORT", "e"))
	n.Do("SET", "str", "x")
	assert.Equal(t, errReply(engine.ErrWrongType), n.Do("SORT", "str"))
	assert.Equal(t, arr(), n.Do("SORT", "nokey"))
	assert.Equal(t, intReply(0), n.Do("SORT", "nokey", "STORE", "sd"))
	assert.Equal(t, intReply(0), n.Do("EXISTS", "sd"))
}

// SORT's keys as COMMAND GETKEYS reports them: the last STORE counts.
func TestSortKeys(t *testing.T) {
	newClient(t)
	keys := func(args ...string) []int {
		a := make([][]byte, len(args))
		for i, x := range args {
			a[i] = []byte(x)
		}
		idx, err := command.Lookup(a[0]).KeyIndexes(nil, a)
		require.NoError(t, err)
		return idx
	}
	assert.Equal(t, []int{1, 3}, keys("sort", "abc", "store", "def"))
	assert.Equal(t, []int{1, 7}, keys("sort", "abc", "store", "invalid", "store", "stillbad", "store", "def"))
	assert.Equal(t, []int{1}, keys("sort", "abc", "get", "store", "by", "store"))
	assert.Equal(t, []int{1}, keys("sort_ro", "abc", "store", "def"))
}
