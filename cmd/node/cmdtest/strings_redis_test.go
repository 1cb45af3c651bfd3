package cmdtest_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// strScript exercises every string command, its options and its errors. All
// keys share the hash tag {s} (slotd refuses cross-slot commands even
// standalone); the tag is rewritten per protocol so each run starts empty.
var strScript = [][]string{
	// GET / SET and its options.
	{"GET", "{s}a"},
	{"SET", "{s}a", "hello"},
	{"GET", "{s}a"},
	{"SET", "{s}a", "v", "NX"},
	{"SET", "{s}a", "v2", "XX"},
	{"GET", "{s}a"},
	{"SET", "{s}b", "v", "XX"},
	{"SET", "{s}b", "v", "NX", "GET"},
	{"SET", "{s}b", "w", "NX", "GET"},
	{"SET", "{s}b", "w", "XX", "GET"},
	{"SET", "{s}b2", "w", "XX", "GET"},
	{"GET", "{s}b"},
	{"SET", "{s}a", "v", "EX", "100", "EX", "200"},
	{"SET", "{s}a", "v", "EX", "10", "PX", "100"},
	{"SET", "{s}a", "v", "KEEPTTL", "EX", "1"},
	{"SET", "{s}a", "v", "EX", "10", "KEEPTTL"},
	{"SET", "{s}a", "v", "EXAT", "10", "PXAT", "100"},
	{"SET", "{s}a", "v", "EX", "0"},
	{"SET", "{s}a", "v", "EX", "-1"},
	{"SET", "{s}a", "v", "PX", "0"},
	{"SET", "{s}a", "v", "EXAT", "0"},
	{"SET", "{s}a", "v", "PXAT", "-5"},
	{"SET", "{s}a", "v", "EX", "abc"},
	{"SET", "{s}a", "v", "EX", "1.5"},
	{"SET", "{s}a", "v", "PX", "9223372036854775807"},
	{"SET", "{s}a", "v", "EX", "9223372036854775"},
	{"SET", "{s}a", "v", "EX", "9223372036854776"},
	{"SET", "{s}a", "v", "EXAT", "9223372036854775"},
	{"SET", "{s}a", "v", "EXAT", "9223372036854776"},
	{"SET", "{s}a", "v", "PXAT", "9223372036854775807"},
	{"SET", "{s}a", "v", "EXAT", "1"},
	{"GET", "{s}a"},
	{"SET", "{s}a", "v", "nx", "xx"},
	{"SET", "{s}a", "v", "xx", "nx"},
	{"SET", "{s}a", "v", "ex"},
	{"SET", "{s}a", "v", "foo"},
	{"SET", "{s}a", "v", "exat", "abc", "nx", "foo"},
	{"SET", "{s}a", "v", "get", "get"},
	{"SET", "{s}a", "w", "Nx", "gEt"},
	{"SET", "{s}a", "x", "keepttl", "KeepTTL"},
	{"SET", "{s}a", "y", "PXAT", "1", "GET"},
	{"GET", "{s}a"},
	{"SET", "{s}nul", "v", "nx\x00junk"},
	{"GET", "{s}nul"},
	{"SET", "{s}nul", "v\x00w\r\n"},
	{"GET", "{s}nul"},
	{"SET", "{s}empty", ""},
	{"GET", "{s}empty"},
	{"SET", "{s}a"},
	{"GET"},
	{"GET", "{s}a", "{s}b"},

	// SETNX, SETEX, PSETEX.
	{"SETNX", "{s}c", "1"},
	{"SETNX", "{s}c", "2"},
	{"GET", "{s}c"},
	{"SETNX", "{s}c"},
	{"SETEX", "{s}d", "100", "v"},
	{"GET", "{s}d"},
	{"SETEX", "{s}d", "0", "v"},
	{"SETEX", "{s}d", "-1", "v"},
	{"SETEX", "{s}d", "abc", "v"},
	{"SETEX", "{s}d", "9223372036854775807", "v"},
	{"SETEX", "{s}d", "100"},
	{"PSETEX", "{s}d", "0", "v"},
	{"PSETEX", "{s}d", "100000", "w"},
	{"PSETEX", "{s}d", "9223372036854775807", "v"},
	{"GET", "{s}d"},

	// GETSET, GETDEL.
	{"GETSET", "{s}e", "new"},
	{"GETSET", "{s}e", "newer"},
	{"GET", "{s}e"},
	{"GETDEL", "{s}e"},
	{"GETDEL", "{s}e"},
	{"GET", "{s}e"},
	{"GETSET", "{s}e"},

	// GETEX.
	{"GETEX", "{s}f"},
	{"SET", "{s}f", "v"},
	{"GETEX", "{s}f"},
	{"GETEX", "{s}f", "EX", "100"},
	{"GETEX", "{s}f", "PERSIST"},
	{"GETEX", "{s}f", "persist", "persist"},
	{"GETEX", "{s}f", "EX", "0"},
	{"GETEX", "{s}f", "PX", "-1"},
	{"GETEX", "{s}f", "ex", "abc"},
	{"GETEX", "{s}f", "ex", "9223372036854775807"},
	{"GETEX", "{s}f", "persist", "ex", "10"},
	{"GETEX", "{s}f", "ex", "10", "persist"},
	{"GETEX", "{s}f", "ex", "10", "ex", "20"},
	{"GETEX", "{s}f", "ex", "10", "px", "20"},
	{"GETEX", "{s}f", "px"},
	{"GETEX", "{s}f", "keepttl"},
	{"GETEX", "{s}f", "nx"},
	{"GETEX", "{s}f", "get"},
	{"GETEX", "{s}nokey", "ex", "-1"},
	{"GETEX", "{s}nokey", "ex", "abc"},
	{"GETEX", "{s}nokey", "foo"},
	{"GETEX", "{s}f", "PXAT", "99999999999999"},
	{"GETEX", "{s}f", "EXAT", "1"},
	{"GET", "{s}f"},
	{"GETEX"},

	// MGET, MSET, MSETNX.
	{"MSET", "{s}g", "1", "{s}h", "2"},
	{"MSET", "{s}g", "1", "{s}h"},
	{"MSET", "{s}g"},
	{"MGET", "{s}g", "{s}h", "{s}nokey", "{s}g"},
	{"MGET", "{s}g"},
	{"MGET"},
	{"MSETNX", "{s}g", "1", "{s}i", "2"},
	{"MGET", "{s}i"},
	{"MSETNX", "{s}i", "1", "{s}j", "2"},
	{"MGET", "{s}i", "{s}j"},
	{"MSETNX", "{s}k", "1", "{s}k", "2"},
	{"GET", "{s}k"},
	{"MSETNX", "{s}i", "1", "{s}j"},
	{"MSET", "{s}k", "3", "{s}k", "4"},
	{"GET", "{s}k"},

	// INCR, DECR, INCRBY, DECRBY.
	{"INCR", "{s}n1"},
	{"INCR", "{s}n1"},
	{"DECR", "{s}n1"},
	{"INCRBY", "{s}n1", "10"},
	{"DECRBY", "{s}n1", "5"},
	{"DECRBY", "{s}n1", "-5"},
	{"INCRBY", "{s}n1", "abc"},
	{"INCRBY", "{s}n1", " 1"},
	{"INCRBY", "{s}n1", "+1"},
	{"INCRBY", "{s}n1", "01"},
	{"INCRBY", "{s}n1", "-0"},
	{"INCRBY", "{s}n1", ""},
	{"INCRBY", "{s}n1", "9223372036854775808"},
	{"GET", "{s}n1"},
	{"SET", "{s}n2", "9223372036854775806"},
	{"INCR", "{s}n2"},
	{"INCR", "{s}n2"},
	{"INCRBY", "{s}n2", "-9223372036854775807"},
	{"SET", "{s}n3", "-9223372036854775807"},
	{"DECR", "{s}n3"},
	{"DECR", "{s}n3"},
	{"DECRBY", "{s}n3", "-9223372036854775808"},
	{"INCRBY", "{s}n3", "-9223372036854775808"},
	{"INCRBY", "{s}n3", "9223372036854775807"},
	{"DECRBY", "{s}n3", "9223372036854775807"},
	{"SET", "{s}n4", "abc"},
	{"INCR", "{s}n4"},
	{"SET", "{s}n4", " 1"},
	{"INCR", "{s}n4"},
	{"SET", "{s}n4", "1.5"},
	{"DECR", "{s}n4"},
	{"SET", "{s}n4", ""},
	{"INCR", "{s}n4"},
	{"SET", "{s}n4", "007"},
	{"INCR", "{s}n4"},
	{"SET", "{s}n4", "-0"},
	{"INCR", "{s}n4"},
	{"SET", "{s}n4", "99999999999999999999"},
	{"INCR", "{s}n4"},
	{"SET", "{s}n5", "10", "EX", "1000"},
	{"INCR", "{s}n5"},
	{"GET", "{s}n5"},
	{"INCR"},
	{"INCR", "{s}n5", "{s}n5"},
	{"INCRBY", "{s}n5"},

	// INCRBYFLOAT: long double arithmetic, %.17Lf formatting, errors.
	{"SET", "{s}x", "10"},
	{"INCRBYFLOAT", "{s}x", "0.1"},
	{"INCRBYFLOAT", "{s}x", "0.1"},
	{"INCRBYFLOAT", "{s}x", "0.1"},
	{"SET", "{s}y", "5.0e3"},
	{"INCRBYFLOAT", "{s}y", "0"},
	{"GET", "{s}y"},
	{"SET", "{s}z", "1e308"},
	{"INCRBYFLOAT", "{s}z", "1e308"},
	{"INCRBYFLOAT", "{s}z", "1e307"},
	{"INCRBYFLOAT", "{s}w", "1.5e20"},
	{"INCRBYFLOAT", "{s}w", "1e-20"},
	{"INCRBYFLOAT", "{s}fl", "inf"},
	{"INCRBYFLOAT", "{s}fl", "-Infinity"},
	{"INCRBYFLOAT", "{s}fl", "nan"},
	{"INCRBYFLOAT", "{s}fl", "abc"},
	{"INCRBYFLOAT", "{s}fl", " 1"},
	{"INCRBYFLOAT", "{s}fl", "1 "},
	{"INCRBYFLOAT", "{s}fl", ""},
	{"INCRBYFLOAT", "{s}fl", "1\x00"},
	{"INCRBYFLOAT", "{s}fl", "1e"},
	{"INCRBYFLOAT", "{s}fl", "."},
	{"INCRBYFLOAT", "{s}fl", "1e5000"},
	{"INCRBYFLOAT", "{s}fl", "1e-5000"},
	{"INCRBYFLOAT", "{s}fl", "0x10"},
	{"INCRBYFLOAT", "{s}fl", "0x1p-3"},
	{"INCRBYFLOAT", "{s}fl", "1e400"},
	{"INCRBYFLOAT", "{s}fl", "1e-400"},
	{"INCRBYFLOAT", "{s}fl", "1.18973149535723176502e4932"},
	{"INCRBYFLOAT", "{s}fl2", "-0.0"},
	{"INCRBYFLOAT", "{s}fl2", "1.23456789012345678901"},
	{"INCRBYFLOAT", "{s}fl2", "-1.23456789012345678901"},
	{"INCRBYFLOAT", "{s}fl2", "-1e-5"},
	{"INCRBYFLOAT", "{s}fl2", ".5"},
	{"INCRBYFLOAT", "{s}fl2", "5."},
	{"INCRBYFLOAT", "{s}fl2", "+1E+2"},
	{"INCRBYFLOAT", "{s}fl3", "123456789012345678"},
	{"INCRBYFLOAT", "{s}fl3", "1e21"},
	{"INCRBYFLOAT", "{s}fl4", "1e-17"},
	{"INCRBYFLOAT", "{s}fl4", "4e-18"},
	{"INCRBYFLOAT", "{s}fl4", "6e-18"},
	{"SET", "{s}fl5", "inf"},
	{"INCRBYFLOAT", "{s}fl5", "1"},
	{"INCRBYFLOAT", "{s}fl5", "abc"},
	{"SET", "{s}fl5", ""},
	{"INCRBYFLOAT", "{s}fl5", "1"},
	{"SET", "{s}fl5", "1e5000"},
	{"INCRBYFLOAT", "{s}fl5", "1"},
	{"SET", "{s}fl5", "1.1897314953572317650e4932"},
	{"INCRBYFLOAT", "{s}fl5", "1e4931"},
	{"INCRBYFLOAT", "{s}fl5", "-1e4932"},
	{"SET", "{s}fl6", "3", "PX", "100000000"},
	{"INCRBYFLOAT", "{s}fl6", "1.5"},
	{"GET", "{s}fl6"},
	{"INCRBYFLOAT", "{s}fl6"},

	// APPEND, STRLEN.
	{"APPEND", "{s}ap", "Hello"},
	{"APPEND", "{s}ap", " World"},
	{"APPEND", "{s}ap", ""},
	{"GET", "{s}ap"},
	{"STRLEN", "{s}ap"},
	{"STRLEN", "{s}nokey"},
	{"APPEND", "{s}ap2", ""},
	{"GET", "{s}ap2"},
	{"SET", "{s}ap3", "12"},
	{"APPEND", "{s}ap3", "34"},
	{"INCR", "{s}ap3"},
	{"STRLEN", "{s}ap3"},
	{"APPEND", "{s}ap"},
	{"STRLEN"},

	// GETRANGE.
	{"SET", "{s}r", "Hello World"},
	{"GETRANGE", "{s}r", "0", "-1"},
	{"GETRANGE", "{s}r", "-3", "-1"},
	{"GETRANGE", "{s}r", "-1", "-3"},
	{"GETRANGE", "{s}r", "5", "3"},
	{"GETRANGE", "{s}r", "-100", "100"},
	{"GETRANGE", "{s}r", "100", "200"},
	{"GETRANGE", "{s}r", "0", "-100"},
	{"GETRANGE", "{s}r", "-5", "-100"},
	{"GETRANGE", "{s}r", "0", "0"},
	{"GETRANGE", "{s}r", "10", "10"},
	{"GETRANGE", "{s}r", "11", "11"},
	{"GETRANGE", "{s}r", "3", "x"},
	{"GETRANGE", "{s}r", "x", "3"},
	{"GETRANGE", "{s}nokey", "0", "-1"},
	{"GETRANGE", "{s}nokey", "a", "-1"},
	{"GETRANGE", "{s}r", "9223372036854775807", "-9223372036854775808"},
	{"GETRANGE", "{s}r", "-9223372036854775808", "9223372036854775807"},
	{"GETRANGE", "{s}empty", "0", "-1"},
	{"GETRANGE", "{s}empty", "-1", "0"},
	{"SET", "{s}int", "12345"},
	{"GETRANGE", "{s}int", "1", "3"},
	{"GETRANGE", "{s}r", "0"},

	// SETRANGE (this node and the reference run with proto-max-bulk-len 1mb).
	{"SETRANGE", "{s}r", "-1", "x"},
	{"SETRANGE", "{s}r", "1", ""},
	{"SETRANGE", "{s}r", "6", "Redis"},
	{"GET", "{s}r"},
	{"SETRANGE", "{s}r", "15", "!"},
	{"GET", "{s}r"},
	{"SETRANGE", "{s}sr", "5", ""},
	{"GET", "{s}sr"},
	{"SETRANGE", "{s}sr", "3", "ab"},
	{"GET", "{s}sr"},
	{"SETRANGE", "{s}sr", "0", "xyzxyzxyz"},
	{"SETRANGE", "{s}sr", "abc", "ab"},
	{"SETRANGE", "{s}sr", "9223372036854775808", "ab"},
	{"SETRANGE", "{s}sr", "9223372036854775807", "ab"},
	{"SETRANGE", "{s}sr", "1048575", "ab"},
	{"SETRANGE", "{s}big", "1048575", "ab"},
	{"SETRANGE", "{s}big", "1048574", "ab"},
	{"STRLEN", "{s}big"},
	{"APPEND", "{s}big", "x"},
	{"SETRANGE", "{s}big", "1048575", "x"},
	{"SETRANGE", "{s}big", "1048575", ""},
	{"GETRANGE", "{s}big", "-3", "-1"},
	{"SET", "{s}si", "123"},
	{"SETRANGE", "{s}si", "1", "9"},
	{"INCR", "{s}si"},
	{"SETRANGE", "{s}sr", "1"},

	// LCS.
	{"MSET", "{s}key1", "ohmytext", "{s}key2", "mynewtext"},
	{"LCS", "{s}key1", "{s}key2"},
	{"LCS", "{s}key1", "{s}key2", "LEN"},
	{"LCS", "{s}key1", "{s}key2", "IDX"},
	{"LCS", "{s}key1", "{s}key2", "idx", "minmatchlen", "4", "withmatchlen"},
	{"LCS", "{s}key1", "{s}key2", "IDX", "WITHMATCHLEN"},
	{"LCS", "{s}key1", "{s}key2", "LEN", "IDX"},
	{"LCS", "{s}key1", "{s}key2", "minmatchlen"},
	{"LCS", "{s}key1", "{s}key2", "minmatchlen", "x"},
	{"LCS", "{s}key1", "{s}key2", "minmatchlen", "-5", "idx"},
	{"LCS", "{s}key1", "{s}key2", "len", "len", "foo"},
	{"LCS", "{s}key1", "{s}key2", "len", "minmatchlen", "x"},
	{"LCS", "{s}nokey", "{s}key2"},
	{"LCS", "{s}nokey", "{s}nokey2", "IDX"},
	{"LCS", "{s}nokey", "{s}key2", "LEN"},
	{"LCS", "{s}key1", "{s}key1", "IDX", "WITHMATCHLEN"},
	{"LCS", "{s}empty", "{s}key1", "IDX"},
	{"LCS", "{s}key1"},
	{"SETRANGE", "{s}l1", "599", "a"},
	{"SETRANGE", "{s}l2", "599", "b"},
	{"LCS", "{s}l1", "{s}l2"},
	{"LCS", "{s}l1", "{s}l2", "LEN"},
	{"LCS", "{s}l1", "{s}key1", "LEN"},

	// Writes that change nothing leave WATCHed keys clean; real writes
	// (even APPEND of nothing) make EXEC fail.
	{"SET", "{s}w", "1"},
	{"WATCH", "{s}w"},
	{"SETNX", "{s}w", "2"},
	{"SET", "{s}w", "3", "NX"},
	{"SET", "{s}w", "3", "NX", "GET"},
	{"GETEX", "{s}w"},
	{"GETEX", "{s}w", "PERSIST"},
	{"SETRANGE", "{s}w", "0", ""},
	{"MSETNX", "{s}w", "1"},
	{"GETDEL", "{s}w2"},
	{"MULTI"},
	{"GET", "{s}w"},
	{"EXEC"},
	{"WATCH", "{s}w"},
	{"APPEND", "{s}w", ""},
	{"MULTI"},
	{"GET", "{s}w"},
	{"EXEC"},
	{"WATCH", "{s}w"},
	{"GETEX", "{s}w", "EX", "100"},
	{"MULTI"},
	{"GET", "{s}w"},
	{"EXEC"},
}

// strRandomScript adds seeded random INCRBYFLOAT chains and LCS inputs,
// whose exact replies are hard to predict by hand.
func strRandomScript() [][]string {
	r := rand.New(rand.NewPCG(7, 11))
	var out [][]string
	num := func() string {
		switch r.IntN(8) {
		case 0:
			return strconv.FormatFloat(r.Float64()*2e6-1e6, 'f', -1, 64)
		case 1:
			return strconv.FormatFloat((r.Float64()*20-10)*float64(r.IntN(1e6)), 'e', r.IntN(25), 64)
		case 2:
			return fmt.Sprintf("%de%d", r.Int64N(1e15), r.IntN(80)-40)
		case 3:
			return strconv.FormatInt(r.Int64()>>r.IntN(63), 10)
		case 4:
			return "0." + strconv.FormatUint(r.Uint64(), 10)
		case 5: // anywhere in the long double range
			return fmt.Sprintf("%de%d", r.Int64N(1e6), r.IntN(9800)-4900)
		case 6:
			return fmt.Sprintf("0x%xp%d", r.Uint64()>>r.IntN(64), r.IntN(200)-100)
		default:
			return fmt.Sprintf("%.20f", r.Float64()*2-1)
		}
	}
	for i := 0; i < 300; i++ {
		key := "{s}rf" + strconv.Itoa(i%7)
		out = append(out, []string{"INCRBYFLOAT", key, num()})
	}
	alpha := "abcab\x00"
	str := func() string {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return string(b)
	}
	for i := 0; i < 30; i++ {
		out = append(out,
			[]string{"MSET", "{s}la", str(), "{s}lb", str()},
			[]string{"LCS", "{s}la", "{s}lb"},
			[]string{"LCS", "{s}la", "{s}lb", "IDX", "WITHMATCHLEN", "MINMATCHLEN", strconv.Itoa(r.IntN(3))},
		)
	}
	return out
}

// TestStringsSameAsRedis sends the same commands to slotd and to a real
// redis-server, in RESP2 and RESP3, and requires byte-identical replies.
func TestStringsSameAsRedis(t *testing.T) {
	script := append(append([][]string{}, strScript...), strRandomScript()...)
	sameAsRedis(t, "{s}", script, "--proto-max-bulk-len", "1mb")
}
