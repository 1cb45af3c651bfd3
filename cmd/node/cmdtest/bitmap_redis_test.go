package cmdtest_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// bitScript exercises every bitmap command, its options, its edge cases and
// its errors. proto-max-bulk-len is 1mb on both servers, so the largest bit
// offset is 8388607.
var bitScript = [][]string{
	// SETBIT / GETBIT.
	{"SETBIT", "{t}a", "7", "1"},
	{"SETBIT", "{t}a", "7", "1"},
	{"GETBIT", "{t}a", "7"},
	{"GETBIT", "{t}a", "6"},
	{"GETBIT", "{t}a", "100"},
	{"SETBIT", "{t}a", "7", "0"},
	{"GET", "{t}a"},
	{"SETBIT", "{t}a", "20", "1"},
	{"GET", "{t}a"},
	{"STRLEN", "{t}a"},
	{"SETBIT", "{t}a", "-1", "1"},
	{"SETBIT", "{t}a", "abc", "1"},
	{"SETBIT", "{t}a", "1.5", "1"},
	{"SETBIT", "{t}a", " 1", "1"},
	{"SETBIT", "{t}a", "8388608", "1"},
	{"SETBIT", "{t}a", "9223372036854775807", "1"},
	{"SETBIT", "{t}a", "99999999999999999999", "1"},
	{"SETBIT", "{t}a", "1", "2"},
	{"SETBIT", "{t}a", "1", "-1"},
	{"SETBIT", "{t}a", "1", "x"},
	{"SETBIT", "{t}a", "1", "01"},
	{"SETBIT", "{t}a", "x", "x"},
	{"SETBIT", "{t}a", "1"},
	{"SETBIT", "{t}big", "8388607", "1"},
	{"STRLEN", "{t}big"},
	{"GETBIT", "{t}big", "8388607"},
	{"GETBIT", "{t}big", "8388608"},
	{"GETBIT", "{t}nokey", "8388608"},
	{"GETBIT", "{t}nokey", "5"},
	{"GETBIT", "{t}a", "-1"},
	{"GETBIT", "{t}a"},
	{"SET", "{t}s", "hello"},
	{"SETBIT", "{t}s", "0", "1"},
	{"GET", "{t}s"},
	{"GETBIT", "{t}s", "1"},
	{"SET", "{t}n", "12345"},
	{"GETBIT", "{t}n", "2"},
	{"SETBIT", "{t}n", "6", "0"},
	{"GET", "{t}n"},
	{"LPUSH", "{t}list", "x"},
	{"SETBIT", "{t}list", "1", "1"},
	{"GETBIT", "{t}list", "1"},
	{"GETBIT", "{t}list", "x"},
	{"SETBIT", "{t}list", "x", "1"},
	{"SETBIT", "{t}list", "1", "5"},

	// BITCOUNT.
	{"SET", "{t}fb", "foobar"},
	{"BITCOUNT", "{t}fb"},
	{"BITCOUNT", "{t}fb", "0", "0"},
	{"BITCOUNT", "{t}fb", "1", "1"},
	{"BITCOUNT", "{t}fb", "1", "1", "BYTE"},
	{"BITCOUNT", "{t}fb", "5", "30", "BIT"},
	{"BITCOUNT", "{t}fb", "5", "30", "bit"},
	{"BITCOUNT", "{t}fb", "0", "-1", "bIt"},
	{"BITCOUNT", "{t}fb", "-5", "-1"},
	{"BITCOUNT", "{t}fb", "-1", "-5"},
	{"BITCOUNT", "{t}fb", "-1", "-5", "foo"},
	{"BITCOUNT", "{t}fb", "-100", "100"},
	{"BITCOUNT", "{t}fb", "3", "2"},
	{"BITCOUNT", "{t}fb", "6", "100"},
	{"BITCOUNT", "{t}fb", "47", "47", "BIT"},
	{"BITCOUNT", "{t}fb", "46", "47", "BIT"},
	{"BITCOUNT", "{t}fb", "9", "9", "BIT"},
	{"BITCOUNT", "{t}fb", "-9", "-2", "BIT"},
	{"BITCOUNT", "{t}fb", "0", "1000", "BIT"},
	{"BITCOUNT", "{t}fb", "-9223372036854775808", "9223372036854775807"},
	{"BITCOUNT", "{t}fb", "-9223372036854775808", "9223372036854775807", "BIT"},
	{"BITCOUNT", "{t}fb", "0"},
	{"BITCOUNT", "{t}fb", "0", "1", "BIT", "x"},
	{"BITCOUNT", "{t}fb", "0", "1", "bits"},
	{"BITCOUNT", "{t}fb", "a", "1"},
	{"BITCOUNT", "{t}fb", "0", "b"},
	{"BITCOUNT", "{t}fb", "0", "99999999999999999999"},
	{"BITCOUNT", "{t}nokey"},
	{"BITCOUNT", "{t}nokey", "0"},
	{"BITCOUNT", "{t}nokey", "a", "b", "c", "d"},
	{"BITCOUNT", "{t}list"},
	{"BITCOUNT", "{t}list", "0"},
	{"BITCOUNT", "{t}big"},
	{"BITCOUNT", "{t}big", "-1", "-1"},
	{"BITCOUNT", "{t}big", "100", "-1"},
	{"SET", "{t}empty", ""},
	{"BITCOUNT", "{t}empty"},
	{"BITCOUNT", "{t}empty", "0", "-1"},
	{"BITCOUNT", "{t}empty", "0", "-1", "BIT"},
	{"SET", "{t}n", "12345"},
	{"BITCOUNT", "{t}n"},
	{"BITCOUNT"},

	// BITPOS.
	{"SET", "{t}p", "\xff\xf0\x00"},
	{"BITPOS", "{t}p", "0"},
	{"BITPOS", "{t}p", "1"},
	{"SET", "{t}p", "\x00\xff\xf0"},
	{"BITPOS", "{t}p", "1", "0"},
	{"BITPOS", "{t}p", "1", "2"},
	{"BITPOS", "{t}p", "1", "2", "-1", "BYTE"},
	{"BITPOS", "{t}p", "1", "7", "15", "BIT"},
	{"BITPOS", "{t}p", "1", "7", "-3", "bit"},
	{"BITPOS", "{t}p", "0", "8", "11", "BIT"},
	{"BITPOS", "{t}p", "0", "8", "12", "BIT"},
	{"BITPOS", "{t}p", "0", "1", "1"},
	{"BITPOS", "{t}p", "0", "1"},
	{"BITPOS", "{t}p", "0", "20", "-1", "BIT"},
	{"BITPOS", "{t}p", "0", "20", "BIT"},
	{"BITPOS", "{t}p", "0", "3", "2"},
	{"BITPOS", "{t}p", "1", "-1"},
	{"BITPOS", "{t}p", "1", "-100", "100"},
	{"BITPOS", "{t}p", "1", "-100", "100", "BIT"},
	{"SET", "{t}ones", "\xff\xff\xff"},
	{"BITPOS", "{t}ones", "0"},
	{"BITPOS", "{t}ones", "0", "1"},
	{"BITPOS", "{t}ones", "0", "1", "-1"},
	{"BITPOS", "{t}ones", "0", "3", "BIT"},
	{"BITPOS", "{t}ones", "0", "3", "20", "BIT"},
	{"BITPOS", "{t}ones", "0", "3", "3", "BIT"},
	{"BITPOS", "{t}ones", "1", "3", "3", "BIT"},
	{"BITPOS", "{t}ones", "1", "5", "2", "BIT"},
	{"BITPOS", "{t}zero", "0"},
	{"BITPOS", "{t}zero", "1"},
	{"BITPOS", "{t}zero", "1", "abc"},
	{"BITPOS", "{t}zero", "2"},
	{"BITPOS", "{t}zero", "x"},
	{"BITPOS", "{t}empty", "0"},
	{"BITPOS", "{t}empty", "1"},
	{"BITPOS", "{t}empty", "0", "0"},
	{"BITPOS", "{t}empty", "0", "0", "-1", "BIT"},
	{"BITPOS", "{t}p", "2"},
	{"BITPOS", "{t}p", "-1"},
	{"BITPOS", "{t}p", "1", "x"},
	{"BITPOS", "{t}p", "1", "0", "x"},
	{"BITPOS", "{t}p", "1", "0", "1", "bytes"},
	{"BITPOS", "{t}p", "1", "0", "1", "BYTE", "x"},
	{"BITPOS", "{t}list", "1"},
	{"BITPOS", "{t}list", "5"},
	{"BITPOS", "{t}big", "1"},
	{"BITPOS", "{t}big", "1", "-2"},
	{"BITPOS", "{t}big", "0", "-1"},
	{"BITPOS", "{t}big", "0", "-1", "-1", "BIT"},
	{"BITPOS", "{t}n", "1", "2"},
	{"BITPOS", "{t}p"},

	// BITOP.
	{"SET", "{t}x", "\x0f\xf0abc"},
	{"SET", "{t}y", "\xff\x00"},
	{"BITOP", "AND", "{t}d", "{t}x", "{t}y"},
	{"GET", "{t}d"},
	{"BITOP", "or", "{t}d", "{t}x", "{t}y"},
	{"GET", "{t}d"},
	{"BITOP", "Xor", "{t}d", "{t}x", "{t}y", "{t}x"},
	{"GET", "{t}d"},
	{"BITOP", "NOT", "{t}d", "{t}x"},
	{"GET", "{t}d"},
	{"BITOP", "AND", "{t}d", "{t}x", "{t}nokey"},
	{"GET", "{t}d"},
	{"BITOP", "OR", "{t}d", "{t}nokey", "{t}x"},
	{"GET", "{t}d"},
	{"BITOP", "AND", "{t}d", "{t}x"},
	{"GET", "{t}d"},
	{"SET", "{t}d", "v", "EX", "1000"},
	{"BITOP", "OR", "{t}d", "{t}x"},
	{"TTL", "{t}d"},
	{"BITOP", "OR", "{t}d", "{t}nokey", "{t}nokey2"},
	{"EXISTS", "{t}d"},
	{"BITOP", "OR", "{t}d", "{t}nokey"},
	{"BITOP", "NOT", "{t}d", "{t}empty"},
	{"EXISTS", "{t}d"},
	{"LPUSH", "{t}dl", "x"},
	{"BITOP", "OR", "{t}dl", "{t}x"},
	{"TYPE", "{t}dl"},
	{"GET", "{t}dl"},
	{"BITOP", "OR", "{t}d", "{t}x", "{t}list"},
	{"BITOP", "OR", "{t}d", "{t}list", "{t}nokey"},
	{"BITOP", "NOT", "{t}d", "{t}x", "{t}y"},
	{"BITOP", "NOT", "{t}d"},
	{"BITOP", "NAND", "{t}d", "{t}x"},
	{"BITOP", "NAND", "{t}d", "{t}x", "{t}y"},
	{"BITOP", "OR", "{t}d"},
	{"SET", "{t}l1", strings.Repeat("\xa5\x5a", 50)},
	{"SET", "{t}l2", strings.Repeat("\x3c", 77)},
	{"SET", "{t}l3", strings.Repeat("\xf1", 33)},
	{"BITOP", "AND", "{t}d", "{t}l1", "{t}l2", "{t}l3"},
	{"GET", "{t}d"},
	{"BITOP", "OR", "{t}d", "{t}l1", "{t}l2", "{t}l3"},
	{"GET", "{t}d"},
	{"BITOP", "XOR", "{t}d", "{t}l1", "{t}l2", "{t}l3"},
	{"GET", "{t}d"},
	{"BITOP", "NOT", "{t}d", "{t}l1"},
	{"GET", "{t}d"},
	{"BITOP", "AND", "{t}d", "{t}n", "{t}n"},
	{"GET", "{t}d"},

	// BITFIELD.
	{"BITFIELD", "{t}f"},
	{"EXISTS", "{t}f"},
	{"BITFIELD", "{t}f", "GET", "u8", "0"},
	{"EXISTS", "{t}f"},
	{"BITFIELD", "{t}f", "SET", "u8", "0", "255", "GET", "u8", "0", "GET", "i8", "0"},
	{"BITFIELD", "{t}f", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2", "102", "1"},
	{"GET", "{t}f"},
	{"BITFIELD", "{t}f", "set", "i5", "3", "-3", "get", "i5", "3", "get", "u5", "3", "get", "i64", "0"},
	{"BITFIELD", "{t}f", "INCRBY", "u8", "#1", "300", "GET", "u8", "#1", "GET", "u4", "#3"},
	{"BITFIELD", "{t}f", "OVERFLOW", "WRAP", "INCRBY", "i8", "16", "200", "INCRBY", "i8", "16", "-300"},
	{"BITFIELD", "{t}f", "OVERFLOW", "SAT", "INCRBY", "i8", "16", "200", "INCRBY", "i8", "16", "-300"},
	{"BITFIELD", "{t}f", "OVERFLOW", "FAIL", "INCRBY", "i8", "16", "200", "INCRBY", "i8", "16", "-300",
		"INCRBY", "i8", "16", "1"},
	{"BITFIELD", "{t}f", "OVERFLOW", "FAIL", "INCRBY", "u8", "24", "256", "INCRBY", "u8", "24", "-1",
		"INCRBY", "u8", "24", "255", "INCRBY", "u8", "24", "1"},
	{"BITFIELD", "{t}f", "OVERFLOW", "SAT", "INCRBY", "u8", "24", "-1000", "INCRBY", "u8", "24", "1000"},
	{"BITFIELD", "{t}f", "OVERFLOW", "WRAP", "INCRBY", "u8", "24", "-1000", "INCRBY", "u8", "24", "1000"},
	{"BITFIELD", "{t}f", "OVERFLOW", "SAT", "SET", "u8", "24", "-1", "SET", "u8", "24", "300",
		"SET", "i8", "24", "-300", "SET", "i8", "24", "300"},
	{"BITFIELD", "{t}f", "OVERFLOW", "WRAP", "SET", "u8", "24", "-1", "SET", "u8", "24", "300",
		"SET", "i8", "24", "-300", "SET", "i8", "24", "300"},
	{"BITFIELD", "{t}f", "OVERFLOW", "FAIL", "SET", "u8", "24", "-1", "SET", "u8", "24", "300",
		"SET", "i8", "24", "-300", "SET", "i8", "24", "300", "SET", "i8", "24", "-128"},
	{"BITFIELD", "{t}f", "SET", "i64", "0", "-9223372036854775808", "INCRBY", "i64", "0", "-1",
		"OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1", "INCRBY", "i64", "0", "9223372036854775807",
		"INCRBY", "i64", "0", "9223372036854775807", "INCRBY", "i64", "0", "1",
		"OVERFLOW", "FAIL", "INCRBY", "i64", "0", "1", "INCRBY", "i64", "0", "-9223372036854775808"},
	{"BITFIELD", "{t}f", "SET", "u63", "1", "9223372036854775807", "GET", "u63", "1", "INCRBY", "u63", "1", "1",
		"OVERFLOW", "SAT", "INCRBY", "u63", "1", "-9223372036854775808", "INCRBY", "u63", "1", "5"},
	{"BITFIELD", "{t}f", "SET", "i1", "7", "1", "GET", "i1", "7", "GET", "u1", "7", "INCRBY", "i1", "7", "-1"},
	{"BITFIELD", "{t}f", "SET", "u3", "61", "7", "GET", "u16", "55", "GET", "i13", "60", "GET", "u63", "3"},
	{"GET", "{t}f"},
	{"BITFIELD", "{t}f", "GET", "u8", "1000", "GET", "i64", "8388600", "GET", "u1", "8388607"},
	{"BITFIELD", "{t}g", "SET", "u8", "8388600", "255"},
	{"STRLEN", "{t}g"},
	{"BITFIELD", "{t}g", "SET", "u8", "8388601", "255"},
	{"BITFIELD", "{t}g", "SET", "i64", "8388607", "-1"},
	{"STRLEN", "{t}g"},
	{"BITFIELD", "{t}g", "SET", "u8", "8388608", "255"},
	{"BITFIELD", "{t}g", "SET", "u8", "#1048576", "255"},
	{"BITFIELD", "{t}g", "SET", "u8", "#1048575", "1"},
	{"BITFIELD", "{t}g", "GET", "u8", "#-1"},
	{"BITFIELD", "{t}g", "GET", "u8", "#"},
	{"BITFIELD", "{t}g", "GET", "u8", "##1"},
	{"BITFIELD", "{t}g", "GET", "i64", "#1152921504606846976"},
	{"BITFIELD", "{t}g", "GET", "u8", "-1"},
	{"BITFIELD", "{t}g", "GET", "u8", "x"},
	{"BITFIELD", "{t}g", "GET", "u64", "0"},
	{"BITFIELD", "{t}g", "GET", "i65", "0"},
	{"BITFIELD", "{t}g", "GET", "u0", "0"},
	{"BITFIELD", "{t}g", "GET", "i0", "0"},
	{"BITFIELD", "{t}g", "GET", "U8", "0"},
	{"BITFIELD", "{t}g", "GET", "I8", "0"},
	{"BITFIELD", "{t}g", "GET", "x8", "0"},
	{"BITFIELD", "{t}g", "GET", "u", "0"},
	{"BITFIELD", "{t}g", "GET", "", "0"},
	{"BITFIELD", "{t}g", "GET", "u08", "0"},
	{"BITFIELD", "{t}g", "GET", "u8\x00x", "0"},
	{"BITFIELD", "{t}g", "GET", "u8", "0\x00"},
	{"BITFIELD", "{t}g", "GET", "u8"},
	{"BITFIELD", "{t}g", "SET", "u8", "0"},
	{"BITFIELD", "{t}g", "INCRBY", "u8", "0"},
	{"BITFIELD", "{t}g", "SET", "u8", "0", "x"},
	{"BITFIELD", "{t}g", "INCRBY", "u8", "0", "1.5"},
	{"BITFIELD", "{t}g", "OVERFLOW"},
	{"BITFIELD", "{t}g", "OVERFLOW", "SATURATE", "GET", "u8", "0"},
	{"BITFIELD", "{t}g", "OVERFLOW", "fail\x00"},
	{"BITFIELD", "{t}g", "FOO", "u8", "0"},
	{"BITFIELD", "{t}g", "get\x00x", "u8", "0"},
	{"BITFIELD", "{t}h", "SET", "u8", "0", "1", "GET", "u99", "0"},
	{"EXISTS", "{t}h"},
	{"BITFIELD", "{t}h", "OVERFLOW", "FAIL", "SET", "i4", "100", "8"},
	{"GET", "{t}h"},
	{"BITFIELD", "{t}list", "GET", "u8", "0"},
	{"BITFIELD", "{t}list", "SET", "u8", "0", "1"},
	{"BITFIELD", "{t}list"},
	{"BITFIELD", "{t}list", "GET", "u99", "0"},
	{"BITFIELD", "{t}n", "GET", "u8", "0", "SET", "u8", "8", "65"},
	{"GET", "{t}n"},
	{"BITFIELD_RO", "{t}f", "GET", "u8", "0", "get", "i3", "#5"},
	{"BITFIELD_RO", "{t}f"},
	{"BITFIELD_RO", "{t}nokey", "GET", "i64", "0"},
	{"BITFIELD_RO", "{t}f", "GET", "u8", "0", "SET", "u8", "0", "1"},
	{"BITFIELD_RO", "{t}f", "INCRBY", "u8", "0", "1"},
	{"BITFIELD_RO", "{t}f", "OVERFLOW", "FAIL"},
	{"BITFIELD_RO", "{t}f", "OVERFLOW", "FOO"},
	{"BITFIELD_RO", "{t}f", "SET", "u8", "0", "x"},
	{"BITFIELD_RO", "{t}list", "GET", "u8", "0"},
	{"BITFIELD_RO", "{t}list", "SET", "u8", "0", "1"},
	{"BITFIELD_RO"},
	{"BITFIELD"},

	// What WATCH sees: writes that change nothing and BITOP's sources stay
	// clean; real changes dirty the key.
	{"SET", "{t}w", "\x01"},
	{"WATCH", "{t}w"},
	{"SETBIT", "{t}w", "7", "1"},
	{"BITFIELD", "{t}w", "GET", "u8", "0"},
	{"BITFIELD", "{t}w", "SET", "u8", "0", "1"},
	{"BITFIELD", "{t}w", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000"},
	{"BITOP", "OR", "{t}wd", "{t}w", "{t}x"},
	{"BITOP", "AND", "{t}wd", "{t}nokey", "{t}w"},
	{"MULTI"},
	{"GET", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}w"},
	{"SETBIT", "{t}w", "7", "0"},
	{"MULTI"},
	{"GET", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}w"},
	{"SETBIT", "{t}w", "100", "0"},
	{"MULTI"},
	{"GET", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}w"},
	{"BITFIELD", "{t}w", "INCRBY", "u8", "0", "1"},
	{"MULTI"},
	{"GET", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}wd"},
	{"BITOP", "OR", "{t}wd", "{t}nokey"},
	{"MULTI"},
	{"GET", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}wd"},
	{"BITOP", "NOT", "{t}wd", "{t}w"},
	{"MULTI"},
	{"GET", "{t}wd"},
	{"EXEC"},
}

// bitRandomScript builds seeded random sequences of bitmap writes and
// reads over a few keys, each followed by GETs of the keys touched, so
// any divergence in the stored bytes shows up at once.
func bitRandomScript(seed uint64, steps int) [][]string {
	r := rand.New(rand.NewPCG(seed, 99))
	keys := []string{"{t}r0", "{t}r1", "{t}r2", "{t}r3"}
	key := func() string { return keys[r.IntN(len(keys))] }
	num := func(n int) string { return strconv.Itoa(r.IntN(n)) }
	signedNum := func(n int) string { return strconv.Itoa(r.IntN(2*n) - n) }
	var out [][]string
	for i := 0; i < steps; i++ {
		k := key()
		switch r.IntN(8) {
		case 0, 1:
			out = append(out, []string{"SETBIT", k, num(600), num(2)})
		case 2:
			ops := []string{"AND", "OR", "XOR", "NOT"}
			op := ops[r.IntN(4)]
			cmd := []string{"BITOP", op, k, key()}
			if op != "NOT" {
				for j := r.IntN(3); j > 0; j-- {
					cmd = append(cmd, key())
				}
			}
			out = append(out, cmd)
		case 3, 4:
			cmd := []string{"BITFIELD", k}
			for j := 1 + r.IntN(4); j > 0; j-- {
				if r.IntN(4) == 0 {
					cmd = append(cmd, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[r.IntN(3)])
				}
				typ := "i" + strconv.Itoa(1+r.IntN(64))
				if r.IntN(2) == 0 {
					typ = "u" + strconv.Itoa(1+r.IntN(63))
				}
				off := num(700)
				if r.IntN(4) == 0 {
					off = "#" + num(40)
				}
				v := r.Int64() >> r.IntN(64)
				if r.IntN(2) == 0 {
					v = -v - int64(r.IntN(2))
				}
				val := strconv.FormatInt(v, 10)
				switch r.IntN(3) {
				case 0:
					cmd = append(cmd, "GET", typ, off)
				case 1:
					cmd = append(cmd, "SET", typ, off, val)
				default:
					cmd = append(cmd, "INCRBY", typ, off, val)
				}
			}
			out = append(out, cmd)
		case 5:
			cmd := []string{"BITCOUNT", k}
			if r.IntN(3) > 0 {
				cmd = append(cmd, signedNum(120), signedNum(120))
				if r.IntN(2) == 0 {
					cmd = append(cmd, []string{"BIT", "BYTE"}[r.IntN(2)])
				}
			}
			out = append(out, cmd)
		case 6:
			cmd := []string{"BITPOS", k, num(2)}
			if r.IntN(4) > 0 {
				cmd = append(cmd, signedNum(150))
				if r.IntN(3) > 0 {
					cmd = append(cmd, signedNum(150))
					if r.IntN(2) == 0 {
						cmd = append(cmd, []string{"BIT", "BYTE"}[r.IntN(2)])
					}
				}
			}
			out = append(out, cmd)
		default:
			out = append(out, []string{"GETBIT", k, num(800)})
		}
		if i%5 == 4 {
			out = append(out, append([]string{"MGET"}, keys...))
		}
	}
	return out
}

// TestBitmapsSameAsRedis compares every bitmap command with redis-server,
// byte for byte, in RESP2 and RESP3.
func TestBitmapsSameAsRedis(t *testing.T) {
	script := append(append([][]string{}, bitScript...), bitRandomScript(1, 3000)...)
	sameAsRedis(t, "{t}", script, "--proto-max-bulk-len", "1mb")
}
