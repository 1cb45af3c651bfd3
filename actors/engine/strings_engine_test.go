package engine_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStringReplyTypes checks each command's reply bytes in both protocols.
func TestStringReplyTypes(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			c := newClient(t, proto)
			k := func(s string) string { return "{rt" + strconv.Itoa(proto) + "}" + s }
			null := respNull(proto)
			cases := []struct {
				args []string
				want string
			}{
				{[]string{"GET", k("a")}, null},
				{[]string{"SET", k("a"), "v"}, "+OK\r\n"},
				{[]string{"GET", k("a")}, respBulk("v")},
				{[]string{"SET", k("a"), "w", "NX"}, null},
				{[]string{"SET", k("a"), "w", "GET"}, respBulk("v")},
				{[]string{"SET", k("b"), "w", "GET"}, null},
				{[]string{"SETNX", k("a"), "x"}, respInt(0)},
				{[]string{"SETNX", k("c"), "x"}, respInt(1)},
				{[]string{"SETEX", k("d"), "10", "x"}, "+OK\r\n"},
				{[]string{"PSETEX", k("d"), "10000", "y"}, "+OK\r\n"},
				{[]string{"GETSET", k("d"), "z"}, respBulk("y")},
				{[]string{"GETSET", k("e"), "z"}, null},
				{[]string{"GETDEL", k("e")}, respBulk("z")},
				{[]string{"GETDEL", k("e")}, null},
				{[]string{"GETEX", k("e")}, null},
				{[]string{"GETEX", k("d"), "PX", "5000"}, respBulk("z")},
				{[]string{"MSET", k("m1"), "1", k("m2"), "2"}, "+OK\r\n"},
				{[]string{"MGET", k("m1"), k("none"), k("m2")}, "*3\r\n" + respBulk("1") + null + respBulk("2")},
				{[]string{"MSETNX", k("m1"), "1", k("m3"), "3"}, respInt(0)},
				{[]string{"MSETNX", k("m3"), "3", k("m4"), "4"}, respInt(1)},
				{[]string{"INCR", k("n")}, respInt(1)},
				{[]string{"INCRBY", k("n"), "41"}, respInt(42)},
				{[]string{"DECR", k("n")}, respInt(41)},
				{[]string{"DECRBY", k("n"), "50"}, respInt(-9)},
				{[]string{"GET", k("n")}, respBulk("-9")},
				// INCRBYFLOAT replies with a bulk string in both protocols.
				{[]string{"INCRBYFLOAT", k("n"), "0.5"}, respBulk("-8.5")},
				{[]string{"APPEND", k("ap"), "abc"}, respInt(3)},
				{[]string{"STRLEN", k("ap")}, respInt(3)},
				{[]string{"STRLEN", k("none")}, respInt(0)},
				{[]string{"GETRANGE", k("ap"), "1", "-1"}, respBulk("bc")},
				{[]string{"GETRANGE", k("none"), "0", "-1"}, respBulk("")},
				{[]string{"SETRANGE", k("ap"), "5", "x"}, respInt(6)},
				{[]string{"GET", k("ap")}, respBulk("abc\x00\x00x")},
				{[]string{"MSET", k("l1"), "ohmytext", k("l2"), "mynewtext"}, "+OK\r\n"},
				{[]string{"LCS", k("l1"), k("l2")}, respBulk("mytext")},
				{[]string{"LCS", k("l1"), k("l2"), "LEN"}, respInt(6)},
			}
			for _, tc := range cases {
				assert.Equal(t, tc.want, c.Do(tc.args...), "%q", tc.args)
			}
			// LCS IDX is a map in RESP3 and a flat array in RESP2.
			head := "*4\r\n"
			if proto == 3 {
				head = "%2\r\n"
			}
			assert.Equal(t, head+respBulk("matches")+"*1\r\n"+
				"*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n"+respBulk("len")+":6\r\n",
				c.Do("LCS", k("l1"), k("l2"), "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"))
		})
	}
}

// TestStringSizeLimits checks the proto-max-bulk-len limit of SETRANGE,
// APPEND and LCS at the default 512MB, without allocating near it.
func TestStringSizeLimits(t *testing.T) {
	c := newClient(t, 2)
	tooBig := respErr("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	assert.Equal(t, tooBig, c.Do("SETRANGE", "k", "536870911", "ab"))
	assert.Equal(t, tooBig, c.Do("SETRANGE", "k", "9223372036854775807", "ab"))
	assert.Equal(t, "$-1\r\n", c.Do("GET", "k"))
	assert.Equal(t, respErr("ERR offset is out of range"), c.Do("SETRANGE", "k", "-1", "ab"))
	assert.Equal(t, respInt(3), c.Do("SETRANGE", "k", "1", "ab"))
	assert.Equal(t, respInt(3), c.Do("SETRANGE", "k", "536870911", ""), "an empty value changes nothing")

	// A series of appends builds the value in place.
	var want strings.Builder
	for i := 0; i < 500; i++ {
		piece := strconv.Itoa(i) + ","
		want.WriteString(piece)
		assert.Equal(t, respInt(int64(want.Len())), c.Do("APPEND", "ap", piece))
	}
	assert.Equal(t, respBulk(want.String()), c.Do("GET", "ap"))
}

// TestStringArity checks the argument-count errors.
func TestStringArity(t *testing.T) {
	c := newClient(t, 3)
	for _, args := range [][]string{
		{"GET"}, {"GET", "a", "b"}, {"SET", "a"}, {"SETNX", "a"}, {"SETEX", "a", "1"}, {"PSETEX", "a", "1"},
		{"GETSET", "a"}, {"GETDEL"}, {"GETEX"}, {"MGET"}, {"MSET", "a"}, {"MSET", "a", "1", "a"},
		{"MSETNX", "a"}, {"MSETNX", "a", "1", "a"}, {"INCR"}, {"DECR", "a", "b"}, {"INCRBY", "a"},
		{"DECRBY", "a"}, {"INCRBYFLOAT", "a"}, {"APPEND", "a"}, {"STRLEN"}, {"GETRANGE", "a", "1"},
		{"SETRANGE", "a", "1"}, {"LCS", "a"},
	} {
		want := respErr("ERR wrong number of arguments for '" + strings.ToLower(args[0]) + "' command")
		assert.Equal(t, want, c.Do(args...), "%q", args)
	}
}
