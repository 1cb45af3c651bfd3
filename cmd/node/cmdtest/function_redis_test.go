package cmdtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

const libTest = "#!lua name=test\n" +
	"redis.register_function{function_name='f1', callback=function() return 'hello' end, flags={'no-cluster'}}"

const libT3 = "#!lua name=t3\n" +
	"redis.register_function('f3', function(keys, args) return redis.call('get', keys[1]) end)\n" +
	"redis.register_function{function_name='f4', description='d', callback=function(keys, args) return args end, " +
	"flags={'no-writes', 'ALLOW-STALE'}}"

const libT9 = "#!lua name=t9\n" +
	"redis.register_function('f9', function(keys, args) return redis.call('nosuch') end)\n" +
	"redis.register_function('f10', function(keys, args) error('x') end)\n" +
	"redis.register_function('f11', function(keys, args) return KEYS end)\n" +
	"redis.register_function('f12', function(keys, args) x = 1 end)\n" +
	"redis.register_function('f13', function(keys, args) redis.setresp(3); return {double=1.5} end)\n" +
	"redis.register_function('f14', function(keys, args) return redis.call('set', keys[1], args[1]) end)\n" +
	"local counter = 0\n" +
	"redis.register_function('f15', function(keys, args) counter = counter + 1; return counter end)"

// fnScript is run against slotd and a real redis-server 7.0.15; every
// reply must be byte-identical.
var fnScript = [][]string{
	{"FUNCTION", "FLUSH"},
	{"FLUSHALL"},
	{"FUNCTION", "LIST"},
	{"FUNCTION", "LOAD", libTest},
	{"FUNCTION", "LOAD", libTest},
	{"FUNCTION", "LOAD", "REPLACE", libTest},
	{"FUNCTION", "LOAD", "#!lua name=t2\nredis.register_function{function_name='f1', callback=function() return 1 end}"},
	{"FUNCTION", "LOAD", "#!lua name=t3\nredis.register_function{function_name='f3', callback=function() end, flags={'bad'}}"},
	{"FUNCTION", "LOAD", libT3},
	{"FUNCTION", "LOAD", "#!lua name=t4\nlocal x = string.len('a')"},
	{"FUNCTION", "LOAD", "#!lua name=t5\nredis.call('ping')"},
	{"FUNCTION", "LOAD", "#!lua name=t6\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=t7\nerror('boom')"},
	{"FUNCTION", "LOAD", "#!lua name=t8\nfoo("},
	{"FUNCTION", "LOAD", "#!lua"},
	{"FUNCTION", "LOAD", "#!py name=x\nx"},
	{"FUNCTION", "LOAD", "lua name=x"},
	{"FUNCTION", "LOAD", "#!lua name=a-b\nx"},
	{"FUNCTION", "LOAD", "#!lua name=x foo=bar\nx"},
	{"FUNCTION", "LOAD", "#!lua name=x name=y\nx"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function('a-b', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function('a', function() end)\nredis.register_function('a', function() end)"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function{function_name='a'}"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function{callback=function() end}"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function{function_name='a', callback=function() end, x=1}"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function('a')"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function(1, 2)"},
	{"FUNCTION", "LOAD", "#!lua name=t10\nredis.register_function(redis.LOG_WARNING, function() return redis.REDIS_VERSION end)"},
	{"FUNCTION", "LOAD", "BOGUS", libT9},
	{"FUNCTION", "LOAD", "REPLACE"},
	{"FUNCTION", "LOAD", libT9},
	{"FCALL", "f1", "0"},
	{"FCALL", "f3", "1", "{k}a"},
	{"FCALL_RO", "f3", "1", "{k}a"},
	{"FCALL", "f4", "0", "a", "b"},
	{"FCALL_RO", "f4", "0", "a", "b"},
	{"FCALL", "nope", "0"},
	{"FCALL", "f4", "x"},
	{"FCALL", "f4", "-1"},
	{"FCALL", "f4", "3", "a"},
	{"FCALL", "f9", "0"},
	{"FCALL", "f10", "0"},
	{"FCALL", "f11", "0"},
	{"FCALL", "f12", "0"},
	{"FCALL", "f13", "0"},
	{"FCALL", "f14", "1", "{k}a", "v"},
	{"FCALL", "f3", "1", "{k}a"},
	{"FCALL", "f15", "0"},
	{"FCALL", "f15", "0"},
	{"FCALL", "4", "0"},
	// (one function per listed library: Redis lists a library's
	// functions in hash order)
	{"FUNCTION", "LIST", "LIBRARYNAME", "test"},
	{"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "TES*"},
	{"FUNCTION", "LOAD", "#!lua name=t11\nredis.register_function{function_name='f', callback=function() end, flags={'allow-cross-slot-keys', 'allow-oom', 'no-cluster', 'allow-stale', 'no-writes'}}"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "t11"},
	{"FUNCTION", "DELETE", "t11"},
	{"FUNCTION", "LIST", "LIBRARYNAME", ""},
	{"FUNCTION", "LIST", "LIBRARYNAME"},
	{"FUNCTION", "LIST", "BOGUS"},
	{"FUNCTION", "DELETE", "nope"},
	{"FUNCTION", "DELETE", "t9"},
	{"FCALL", "f15", "0"},
	{"FUNCTION", "LOAD", libT9},
	{"FCALL", "f15", "0"},
	{"FUNCTION", "DELETE", "t3"},
	{"FUNCTION", "DELETE", "t9"},
	{"FUNCTION", "DELETE", "t10"},
	{"FUNCTION", "DUMP"},
	{"FUNCTION", "RESTORE", "garbage"},
	{"FUNCTION", "RESTORE", "x", "BOGUS"},
	{"FUNCTION", "RESTORE", "x", "FLUSH", "y"},
	{"FUNCTION", "FLUSH", "BOGUS"},
	{"FUNCTION", "FLUSH", "SYNC", "x"},
	{"FUNCTION", "STATS"},
	{"FUNCTION", "KILL"},
	{"FUNCTION", "FLUSH", "ASYNC"},
	{"FUNCTION", "LIST"},
	{"FUNCTION", "DUMP"},
	{"FUNCTION", "STATS"},
	{"FUNCTION", "HELP"},
}

func TestFunctionsMatchRedis(t *testing.T) { oneShardSameAsRedis(t, fnScript) }

// oneShardSameAsRedis runs script against redis-server and a slotd node
// with one shard actor, in RESP2 and RESP3, and requires byte-identical
// replies.
func oneShardSameAsRedis(t *testing.T, script [][]string) {
	raddr := nodetest.StartRedis(t)
	n := nodetest.Start(t, "shard-actors", "1")
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			want := respDial(t, raddr, proto)
			got := respDial(t, n.Addr, proto)
			for _, cmd := range script {
				w, g := want.Do(cmd...), got.Do(cmd...)
				assert.Equal(t, w, g, "%s", strings.Join(cmd, " "))
			}
		})
	}
}

// A FUNCTION DUMP payload moves libraries between redis-server and slotd
// in both directions (redis-cli --cluster add-node copies them so).
func TestFunctionDumpRestoreWithRedis(t *testing.T) {
	raddr := nodetest.StartRedis(t)
	n := nodetest.Start(t)
	theirs, ours := respDial(t, raddr, 2), respDial(t, n.Addr, 2)
	assert.Equal(t, "$4\r\ntest\r\n", theirs.Do("FUNCTION", "LOAD", libTest))
	assert.Equal(t, "$2\r\nt3\r\n", ours.Do("FUNCTION", "LOAD", libT3))
	payload := func(reply string) string {
		_, body, _ := strings.Cut(reply, "\r\n")
		return strings.TrimSuffix(body, "\r\n")
	}
	fromRedis := payload(theirs.Do("FUNCTION", "DUMP"))
	fromSlotd := payload(ours.Do("FUNCTION", "DUMP"))
	assert.Equal(t, "+OK\r\n", ours.Do("FUNCTION", "RESTORE", fromRedis))
	assert.Equal(t, "+OK\r\n", theirs.Do("FUNCTION", "RESTORE", fromSlotd))
	assert.Equal(t, "-ERR Library 'test' already exists\r\n", ours.Do("FUNCTION", "RESTORE", fromRedis))
	assert.Equal(t, "+OK\r\n", ours.Do("FUNCTION", "RESTORE", fromRedis, "REPLACE"))
	assert.Equal(t, "$5\r\nhello\r\n", ours.Do("FCALL", "f1", "0"))
	assert.Equal(t, "*1\r\n$1\r\nz\r\n", theirs.Do("FCALL", "f4", "0", "z"))
	assert.Equal(t, "+OK\r\n", ours.Do("FUNCTION", "RESTORE", fromRedis, "FLUSH"))
	assert.Equal(t, "-ERR Function not found\r\n", ours.Do("FCALL", "f4", "0"))
}

// In cluster mode a no-cluster function is refused, as 00-base of Redis's
// cluster suite checks.
func TestFunctionNoClusterFlag(t *testing.T) {
	n := nodetest.Start(t, "cluster-enabled", "yes")
	c := respDial(t, n.Addr, 2)
	assert.Equal(t, "$4\r\ntest\r\n", c.Do("FUNCTION", "LOAD", libTest))
	assert.Equal(t, "-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n", c.Do("FCALL", "f1", "0"))
}
