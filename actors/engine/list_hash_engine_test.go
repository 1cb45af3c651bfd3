package engine_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListReplyTypes pins the raw reply of the list commands whose
// shape differs between RESP2 and RESP3 or between null forms.
func TestListReplyTypes(t *testing.T) {
	e := newEngine(t)
	for _, proto := range []int{2, 3} {
		c := e.Client(proto)
		k := func(s string) string { return "{lr" + strconv.Itoa(proto) + "}" + s }
		null, nullArr := "$-1\r\n", "*-1\r\n"
		if proto == 3 {
			null, nullArr = "_\r\n", "_\r\n"
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"LPOP", k("l")}, null},
			{[]string{"LPOP", k("l"), "1"}, nullArr},
			{[]string{"LPOP", k("l"), "0"}, nullArr},
			{[]string{"LMPOP", "1", k("l"), "LEFT"}, nullArr},
			{[]string{"LMOVE", k("l"), k("m"), "LEFT", "LEFT"}, null},
			{[]string{"LINDEX", k("l"), "0"}, null},
			{[]string{"LPOS", k("l"), "x"}, null},
			{[]string{"LPOS", k("l"), "x", "COUNT", "0"}, "*0\r\n"},
			{[]string{"LRANGE", k("l"), "0", "-1"}, "*0\r\n"},
			{[]string{"RPUSH", k("l"), "a", "b"}, ":2\r\n"},
			{[]string{"LPOP", k("l"), "0"}, "*0\r\n"},
			{[]string{"LPOP", k("l"), "5"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
			{[]string{"RPUSH", k("l"), "a", "b"}, ":2\r\n"},
			{[]string{"LMPOP", "1", k("l"), "RIGHT", "COUNT", "1"}, "*2\r\n$" + strconv.Itoa(len(k("l"))) + "\r\n" + k("l") + "\r\n*1\r\n$1\r\nb\r\n"},
			{[]string{"LPOS", k("l"), "a", "COUNT", "0"}, "*1\r\n:0\r\n"},
			{[]string{"LSET", k("l"), "0", ""}, "+OK\r\n"},
			{[]string{"LINDEX", k("l"), "0"}, "$0\r\n\r\n"},
			{[]string{"LPOP", k("l"), "-1"}, "-ERR value is out of range, must be positive\r\n"},
			{[]string{"LPOP", k("l"), "1", "2"}, "-ERR wrong number of arguments for 'lpop' command\r\n"},
		} {
			assert.Equal(t, tc.want, c.Do(tc.args...), "RESP%d %q", proto, tc.args)
		}
	}
}

func TestHashReplyTypes(t *testing.T) {
	e := newEngine(t)
	for _, proto := range []int{2, 3} {
		c := e.Client(proto)
		k := func(s string) string { return "{hr" + strconv.Itoa(proto) + "}" + s }
		null, emptyMap, mapHead := "$-1\r\n", "*0\r\n", "*4\r\n"
		pairHead := ""
		if proto == 3 {
			null, emptyMap, mapHead, pairHead = "_\r\n", "%0\r\n", "%2\r\n", "*2\r\n"
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"HGET", k("h"), "f"}, null},
			{[]string{"HGETALL", k("h")}, emptyMap},
			{[]string{"HKEYS", k("h")}, "*0\r\n"},
			{[]string{"HMGET", k("h"), "a", "b"}, "*2\r\n" + null + null},
			{[]string{"HRANDFIELD", k("h")}, null},
			{[]string{"HRANDFIELD", k("h"), "3"}, "*0\r\n"},
			{[]string{"HSCAN", k("h"), "0"}, "*2\r\n$1\r\n0\r\n*0\r\n"},
			{[]string{"HSET", k("h"), "a", "1", "b", "2"}, ":2\r\n"},
			{[]string{"HMSET", k("h"), "a", "1"}, "+OK\r\n"},
			{[]string{"HGETALL", k("h")}, mapHead + "$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
			{[]string{"HRANDFIELD", k("h"), "2", "WITHVALUES"},
				strings.Repeat("*", 1) + map[int]string{2: "4", 3: "2"}[proto] + "\r\n" +
					pairHead + "$1\r\na\r\n$1\r\n1\r\n" + pairHead + "$1\r\nb\r\n$1\r\n2\r\n"},
			{[]string{"HINCRBYFLOAT", k("h"), "a", "1.5"}, "$3\r\n2.5\r\n"},
			{[]string{"HINCRBY", k("h"), "b", "1"}, ":3\r\n"},
			{[]string{"HSCAN", k("h"), "0", "MATCH", "b"}, "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n"},
			{[]string{"HSET", k("h"), "a"}, "-ERR wrong number of arguments for 'hset' command\r\n"},
			{[]string{"HMSET", k("h"), "a", "1", "b"}, "-ERR wrong number of arguments for 'hmset' command\r\n"},
		} {
			assert.Equal(t, tc.want, c.Do(tc.args...), "RESP%d %q", proto, tc.args)
		}
	}
}

func TestListHashWrongType(t *testing.T) {
	c := newClient(t, 2)
	const wt = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	require.Equal(t, ":1\r\n", c.Do("HSET", "{wt}h", "f", "v"))
	require.Equal(t, ":1\r\n", c.Do("RPUSH", "{wt}l", "x"))
	for _, args := range [][]string{
		{"LPUSH", "{wt}h", "x"}, {"RPUSHX", "{wt}h", "x"}, {"LPOP", "{wt}h"}, {"RPOP", "{wt}h", "2"},
		{"LLEN", "{wt}h"}, {"LRANGE", "{wt}h", "0", "1"}, {"LINDEX", "{wt}h", "0"}, {"LSET", "{wt}h", "0", "x"},
		{"LINSERT", "{wt}h", "BEFORE", "a", "b"}, {"LREM", "{wt}h", "0", "x"}, {"LTRIM", "{wt}h", "0", "1"},
		{"LPOS", "{wt}h", "x"}, {"LMOVE", "{wt}h", "{wt}l", "LEFT", "LEFT"},
		{"LMOVE", "{wt}l", "{wt}h", "LEFT", "LEFT"}, {"RPOPLPUSH", "{wt}l", "{wt}h"},
		{"LMPOP", "2", "{wt}none", "{wt}h", "LEFT"},
		{"HSET", "{wt}l", "f", "v"}, {"HSETNX", "{wt}l", "f", "v"}, {"HGET", "{wt}l", "f"},
		{"HMGET", "{wt}l", "f"}, {"HGETALL", "{wt}l"}, {"HKEYS", "{wt}l"}, {"HVALS", "{wt}l"},
		{"HDEL", "{wt}l", "f"}, {"HEXISTS", "{wt}l", "f"}, {"HLEN", "{wt}l"}, {"HSTRLEN", "{wt}l", "f"},
		{"HINCRBY", "{wt}l", "f", "1"}, {"HINCRBYFLOAT", "{wt}l", "f", "1"}, {"HSCAN", "{wt}l", "0"},
		{"HRANDFIELD", "{wt}l"}, {"HRANDFIELD", "{wt}l", "2", "WITHVALUES"},
	} {
		assert.Equal(t, wt, c.Do(args...), "%q", args)
	}
	// The failed LMOVE towards a hash must not have popped anything.
	assert.Equal(t, "*1\r\n$1\r\nx\r\n", c.Do("LRANGE", "{wt}l", "0", "-1"))
}
