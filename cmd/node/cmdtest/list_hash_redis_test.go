package cmdtest_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// lhScript is replayed against slotd and a real redis-server; replies must
// be byte-identical. Prefixes: "sorted " compares with the elements sorted,
// "pairs " with field/value pairs sorted (order of a hashtable), "shape "
// only the reply's types and sizes (random replies), "hscan KEY [opts]"
// iterates HSCAN on both and compares the field/value sets. Keys of one
// command share a hash tag so they are legal in cluster terms.
var lhScript = `
FLUSHALL
LPUSH {l}a x
LPUSH {l}a y z
RPUSH {l}a 1 2 3
LRANGE {l}a 0 -1
LLEN {l}a
LPUSH {l}a
RPUSH
LPUSHX {l}none x
RPUSHX {l}none x
EXISTS {l}none
LPUSHX {l}a p q
RPUSHX {l}a r
LRANGE {l}a 0 -1
SET {l}str v
LPUSH {l}str x
RPUSH {l}str x
LPUSHX {l}str x
RPUSHX {l}str x
LLEN {l}str
LRANGE {l}str 0 1
LINDEX {l}str 0
LSET {l}str 0 x
LINSERT {l}str BEFORE a b
LREM {l}str 0 a
LTRIM {l}str 0 1
LPOS {l}str a
LPOP {l}str
RPOP {l}str 1
LMOVE {l}str {l}a LEFT RIGHT
LMOVE {l}a {l}str LEFT RIGHT
RPOPLPUSH {l}str {l}a
RPOPLPUSH {l}a {l}str
LMPOP 2 {l}none {l}str LEFT
LMPOP 2 {l}str {l}a LEFT
LLEN {l}none
LLEN
LLEN {l}a {l}b
LRANGE {l}a 0
LRANGE {l}a 0 -1 x
LRANGE {l}a 1 2
LRANGE {l}a -3 -1
LRANGE {l}a -100 100
LRANGE {l}a 5 2
LRANGE {l}a 100 200
LRANGE {l}a -1 -2
LRANGE {l}a 0 0
LRANGE {l}a -9223372036854775808 9223372036854775807
LRANGE {l}a a 1
LRANGE {l}a 1 b
LRANGE {l}none a 1
LRANGE {l}none 0 -1
LRANGE {l}a 1.5 2
LRANGE {l}a ' 1' 2
LRANGE {l}a 01 2
LINDEX {l}a 0
LINDEX {l}a -1
LINDEX {l}a 3
LINDEX {l}a 100
LINDEX {l}a -100
LINDEX {l}a x
LINDEX {l}none x
LINDEX {l}none 0
LINDEX {l}a 9223372036854775807
LINDEX {l}a -9223372036854775808
LSET {l}a 0 first
LSET {l}a -1 last
LSET {l}a 100 x
LSET {l}a -100 x
LSET {l}a x x
LSET {l}none x x
LSET {l}none 0 x
LRANGE {l}a 0 -1
LINSERT {l}a BEFORE z before-z
LINSERT {l}a after z after-z
LINSERT {l}a AfTeR last after-last
LINSERT {l}a before first before-first
LINSERT {l}a BEFORE nosuch x
LINSERT {l}a middle z x
LINSERT {l}none BEFORE z x
LINSERT {l}none middle z x
LINSERT {l}a after\0junk z nul
LRANGE {l}a 0 -1
LLEN {l}a
RPUSH {l}r a b a c a d a
LREM {l}r 2 a
LRANGE {l}r 0 -1
LREM {l}r -1 a
LRANGE {l}r 0 -1
LREM {l}r 0 a
LRANGE {l}r 0 -1
LREM {l}r 0 nosuch
LREM {l}r x a
LREM {l}none 1 a
LREM {l}none x a
RPUSH {l}r a a a
LREM {l}r -9223372036854775808 a
LRANGE {l}r 0 -1
LREM {l}r 0 b
LREM {l}r 0 c
LREM {l}r 0 d
EXISTS {l}r
RPUSH {l}t 0 1 2 3 4 5 6 7 8 9
LTRIM {l}t 1 -2
LRANGE {l}t 0 -1
LTRIM {l}t -3 100
LRANGE {l}t 0 -1
LTRIM {l}t 0 0
LRANGE {l}t 0 -1
LTRIM {l}t x 0
LTRIM {l}t 0 x
LTRIM {l}none 0 1
LTRIM {l}none x 1
LTRIM {l}t 5 1
EXISTS {l}t
RPUSH {l}t 1 2 3
LTRIM {l}t -1 -100
EXISTS {l}t
RPUSH {l}p a b c 1 2 3 c 2 c
LPOS {l}p c
LPOS {l}p c RANK 2
LPOS {l}p c RANK -1
LPOS {l}p c RANK -2
LPOS {l}p c RANK 4
LPOS {l}p c COUNT 0
LPOS {l}p c COUNT 2
LPOS {l}p c COUNT 2 RANK 2
LPOS {l}p c COUNT 0 RANK -1
LPOS {l}p c COUNT 1 RANK -3
LPOS {l}p c COUNT 5 RANK 5
LPOS {l}p c MAXLEN 3
LPOS {l}p c MAXLEN 2
LPOS {l}p c MAXLEN 7 COUNT 0
LPOS {l}p c MAXLEN 2 RANK -1
LPOS {l}p c MAXLEN 0
LPOS {l}p nosuch
LPOS {l}p nosuch COUNT 0
LPOS {l}none c
LPOS {l}none c COUNT 0
LPOS {l}none c RANK 0
LPOS {l}p c RANK 0
LPOS {l}p c RANK x
LPOS {l}p c COUNT -1
LPOS {l}p c COUNT x
LPOS {l}p c MAXLEN -1
LPOS {l}p c MAXLEN x
LPOS {l}p c RANK
LPOS {l}p c FOO 1
LPOS {l}p c rank 1 count 1 maxlen 1 extra
LPOS {l}p c RANK -9223372036854775808
LPOS {l}p c RANK -9223372036854775808 COUNT 1
LPOS {l}p c RANK 9223372036854775807
LPOS {l}p c COUNT 9223372036854775807
LPOS {l}p
RPUSH {l}q a b c d e
LPOP {l}q
RPOP {l}q
LPOP {l}q 2
RPOP {l}q 0
LPOP {l}q -1
LPOP {l}q x
LPOP {l}q 1 2
RPOP {l}q 1 2
LPOP {l}q 100
EXISTS {l}q
LPOP {l}q
LPOP {l}q 1
LPOP {l}q 0
RPOP {l}q -1
RPOP {l}q x
LPOP
RPUSH {l}q a
RPOP {l}q 9223372036854775807
RPUSH {l}m1 a b c
LMOVE {l}m1 {l}m2 LEFT RIGHT
LMOVE {l}m1 {l}m2 RIGHT LEFT
LMOVE {l}m1 {l}m2 left left
LRANGE {l}m1 0 -1
LRANGE {l}m2 0 -1
EXISTS {l}m1
LMOVE {l}m1 {l}m2 LEFT RIGHT
LMOVE {l}m2 {l}m2 LEFT RIGHT
LRANGE {l}m2 0 -1
LMOVE {l}m2 {l}m2 RIGHT LEFT
LRANGE {l}m2 0 -1
LMOVE {l}m2 {l}m2 LEFT LEFT
LRANGE {l}m2 0 -1
LMOVE {l}m2 {l}m1 UP LEFT
LMOVE {l}m2 {l}m1 LEFT DOWN
LMOVE {l}none {l}m1 UP LEFT
LMOVE {l}m2 {l}m1 LEFT
LMOVE {l}none {l}str LEFT LEFT
LMOVE {l}m2 {l}str LEFT LEFT
LMOVE {l}m2 {l}m2 left\0x right
RPOPLPUSH {l}m2 {l}m3
RPOPLPUSH {l}none {l}m3
RPOPLPUSH {l}m2 {l}m2
LRANGE {l}m2 0 -1
LRANGE {l}m3 0 -1
RPOPLPUSH {l}m2
RPUSH {l}s a
LMOVE {l}s {l}s LEFT RIGHT
LRANGE {l}s 0 -1
RPOPLPUSH {l}s {l}s
LRANGE {l}s 0 -1
RPUSH {l}x1 a b c
RPUSH {l}x2 d e
LMPOP 1 {l}x1 LEFT
LMPOP 2 {l}none {l}x2 RIGHT
LMPOP 2 {l}x1 {l}x2 LEFT COUNT 5
LMPOP 2 {l}x1 {l}x2 RIGHT COUNT 1
LMPOP 1 {l}none LEFT
LMPOP 2 {l}none {l}none2 LEFT COUNT 10
EXISTS {l}x1 {l}x2
LMPOP 0 {l}x1 LEFT
LMPOP -1 {l}x1 LEFT
LMPOP x {l}x1 LEFT
LMPOP 2 {l}x1 {l}y
LMPOP 3 {l}x1 LEFT
LMPOP 1 {l}x1 MIDDLE
LMPOP 1 {l}x1 LEFT COUNT 0
LMPOP 1 {l}x1 LEFT COUNT -1
LMPOP 1 {l}x1 LEFT COUNT x
LMPOP 1 {l}x1 LEFT COUNT
LMPOP 1 {l}x1 LEFT COUNT 1 COUNT 1
LMPOP 1 {l}x1 LEFT FOO
LMPOP 1 {l}x1
LMPOP 1
LMPOP 1 {l}str LEFT
LMPOP 2 {l}none {l}str LEFT
RPUSH {l}x1 a b c
LMPOP 2 {l}x1 {l}str LEFT COUNT 2
LMPOP 2 {l}x1 {l}str left count 9223372036854775807
TYPE {l}a
OBJECT ENCODING {l}a
` + lhBigListScript() + `
FLUSHALL
HSET {h}a f1 v1
HSET {h}a f2 v2 f3 v3
HSET {h}a f1 new f4 v4
HGETALL {h}a
HSET {h}a f1
HSET {h}a
HSET {h}a f1 v1 f2
HMSET {h}a f5 v5 f6 v6
HMSET {h}a f5
HMSET {h}a f5 v5 f6
HGETALL {h}a
HKEYS {h}a
HVALS {h}a
HLEN {h}a
HGET {h}a f1
HGET {h}a nosuch
HGET {h}none f1
HGET {h}a
HMGET {h}a f1 nosuch f2
HMGET {h}none f1 f2
HMGET {h}a
HSETNX {h}a f1 x
HSETNX {h}a new x
HSETNX {h}n f v
HSETNX {h}a f
HGET {h}a new
HGETALL {h}n
HEXISTS {h}a f1
HEXISTS {h}a nosuch
HEXISTS {h}none f1
HEXISTS {h}a
HLEN {h}none
HLEN
HSTRLEN {h}a f1
HSTRLEN {h}a nosuch
HSTRLEN {h}none f1
HSTRLEN {h}a
HDEL {h}a f1 f1 nosuch f2
HDEL {h}none f1
HDEL {h}a
HGETALL {h}a
HDEL {h}n f
EXISTS {h}n
HDEL {h}a f3 f4 f5 f6 new more
EXISTS {h}a
HGETALL {h}none
HKEYS {h}none
HVALS {h}none
HSET {h}a '' ''
HGETALL {h}a
HSTRLEN {h}a ''
SET {h}str v
HSET {h}str f v
HMSET {h}str f v
HSETNX {h}str f v
HGET {h}str f
HMGET {h}str f
HGETALL {h}str
HKEYS {h}str
HVALS {h}str
HLEN {h}str
HEXISTS {h}str f
HSTRLEN {h}str f
HDEL {h}str f
HINCRBY {h}str f 1
HINCRBY {h}str f x
HINCRBYFLOAT {h}str f 1
HINCRBYFLOAT {h}str f x
HSCAN {h}str 0
HSCAN {h}str x
HRANDFIELD {h}str
HRANDFIELD {h}str 1
HRANDFIELD {h}str x
HINCRBY {h}i f 5
HINCRBY {h}i f -10
HINCRBY {h}i f 0
HGET {h}i f
HINCRBY {h}i f x
HINCRBY {h}i f 1.5
HINCRBY {h}i f ''
HINCRBY {h}i f 9223372036854775807
HINCRBY {h}i f 9223372036854775803
HINCRBY {h}i f 9223372036854775802
HINCRBY {h}i f 1
HINCRBY {h}i g -9223372036854775808
HINCRBY {h}i g -1
HSET {h}i s abc
HINCRBY {h}i s 1
HSET {h}i s ' 1'
HINCRBY {h}i s 1
HSET {h}i s 007
HINCRBY {h}i s 1
HSET {h}i s -0
HINCRBY {h}i s 1
HINCRBY {h}i
HINCRBYFLOAT {h}f x 1.5
HINCRBYFLOAT {h}f x 0.1
HINCRBYFLOAT {h}f x -3
HINCRBYFLOAT {h}f x 1e10
HINCRBYFLOAT {h}f x 5.0e3
HINCRBYFLOAT {h}f x abc
HINCRBYFLOAT {h}f x ''
HINCRBYFLOAT {h}f x inf
HINCRBYFLOAT {h}f x -inf
HINCRBYFLOAT {h}f x nan
HINCRBYFLOAT {h}f x 1e5000
HINCRBYFLOAT {h}f y 0.1
HINCRBYFLOAT {h}f y 0.2
HINCRBYFLOAT {h}f z 10
HSET {h}f s abc
HINCRBYFLOAT {h}f s 1
HSET {h}f s inf
HINCRBYFLOAT {h}f s 1
HSET {h}f s 1e4900
HINCRBYFLOAT {h}f s 1e4900
HINCRBYFLOAT {h}f s -1e4900
HSET {h}f i 17
HINCRBYFLOAT {h}f i 0.5
HINCRBYFLOAT {h}f t 1.1e-4940
pairs HGETALL {h}f
HINCRBYFLOAT {h}f
OBJECT ENCODING {h}f
HSET {h}s a 1 b 2 c 3 ab 4
HSCAN {h}s 0
HSCAN {h}s 0 MATCH a*
HSCAN {h}s 0 MATCH nosuch
HSCAN {h}s 0 MATCH *
HSCAN {h}s 0 COUNT 1
HSCAN {h}s 7 COUNT 1
HSCAN {h}s 0 count 100 match ?
HSCAN {h}s x
HSCAN {h}s -1
HSCAN {h}s ''
HSCAN {h}s 0 COUNT 0
HSCAN {h}s 0 COUNT -1
HSCAN {h}s 0 COUNT x
HSCAN {h}s 0 COUNT
HSCAN {h}s 0 MATCH
HSCAN {h}s 0 TYPE string
HSCAN {h}s 0 NOVALUES
HSCAN {h}s 0 FOO bar
HSCAN {h}none 0
HSCAN {h}none 0 COUNT 0
HSCAN {h}none x
HSCAN {h}s
HRANDFIELD {h}s 4
HRANDFIELD {h}s 5
HRANDFIELD {h}s 100 WITHVALUES
HRANDFIELD {h}s 0
HRANDFIELD {h}s 0 WITHVALUES
HRANDFIELD {h}none
HRANDFIELD {h}none 5
HRANDFIELD {h}none -5 WITHVALUES
HRANDFIELD {h}none 0
HRANDFIELD {h}s x
HRANDFIELD {h}s 1 FOO
HRANDFIELD {h}s 1 WITHVALUES x
HRANDFIELD {h}s -9223372036854775808
HRANDFIELD {h}s -9223372036854775807 WITHVALUES
HRANDFIELD {h}s 4611686018427387904 WITHVALUES
HRANDFIELD {h}none -9223372036854775808
HRANDFIELD {h}none x
HRANDFIELD {h}none 1 FOO
shape HRANDFIELD {h}s
shape HRANDFIELD {h}s 1
shape HRANDFIELD {h}s 2
shape HRANDFIELD {h}s 3 WITHVALUES
shape HRANDFIELD {h}s -10
shape HRANDFIELD {h}s -10 WITHVALUES
shape HRANDFIELD {h}s 1 WITHVALUES
HRANDFIELD
TYPE {h}s
OBJECT ENCODING {h}s
HSET {h}big f ` + strings.Repeat("v", 64) + `
OBJECT ENCODING {h}big
HSET {h}big g ` + strings.Repeat("v", 65) + `
OBJECT ENCODING {h}big
HDEL {h}big g
OBJECT ENCODING {h}big
HSET {h}bigf ` + strings.Repeat("k", 65) + ` v
OBJECT ENCODING {h}bigf
HSETNX {h}bign f ` + strings.Repeat("v", 65) + `
OBJECT ENCODING {h}bign
HSET {h}bigi f 1
HINCRBYFLOAT {h}bigi f 0.` + strings.Repeat("1", 70) + `
OBJECT ENCODING {h}bigi
` + lhBigHashScript()

// lhBigListScript builds a list large enough to span many chunks and
// exercises index walks, inserts and removals across chunk boundaries.
func lhBigListScript() string {
	var b strings.Builder
	for i := 0; i < 10; i++ {
		b.WriteString("RPUSH {l}big")
		for j := 0; j < 100; j++ {
			b.WriteString(" " + strconv.Itoa(i*100+j))
		}
		b.WriteString("\nLPUSH {l}big")
		for j := 0; j < 50; j++ {
			b.WriteString(" n" + strconv.Itoa(i*50+j))
		}
		b.WriteString("\n")
	}
	b.WriteString(`LLEN {l}big
LINDEX {l}big 0
LINDEX {l}big 777
LINDEX {l}big -777
LINDEX {l}big 1499
LSET {l}big 700 set700
LSET {l}big -10 setm10
LINSERT {l}big BEFORE 500 ins-before-500
LINSERT {l}big AFTER 500 ins-after-500
LINSERT {l}big AFTER n0 ins-after-n0
LREM {l}big 0 7
LRANGE {l}big 120 200
LRANGE {l}big 600 800
LRANGE {l}big -300 -200
LPOS {l}big 500
LPOS {l}big 500 RANK -1 MAXLEN 1000
LTRIM {l}big 100 -100
LLEN {l}big
LRANGE {l}big 0 5
LRANGE {l}big -5 -1
LMPOP 1 {l}big RIGHT COUNT 200
LPOP {l}big 300
LLEN {l}big
`)
	// Remove every third element one by one to fragment chunks, then read
	// the whole list back.
	for i := 0; i < 1000; i += 3 {
		b.WriteString("LREM {l}big 1 " + strconv.Itoa(i) + "\n")
	}
	b.WriteString("LRANGE {l}big 0 -1\nLINDEX {l}big 250\nLINDEX {l}big -250\n")
	return b.String()
}

// lhBigHashScript grows a hash past hash-max-listpack-entries.
func lhBigHashScript() string {
	var b strings.Builder
	b.WriteString("HSET {h}many")
	for i := 0; i < 128; i++ {
		b.WriteString(" f" + strconv.Itoa(i) + " v" + strconv.Itoa(i))
	}
	b.WriteString("\nOBJECT ENCODING {h}many\nHGETALL {h}many\nHSET {h}many extra x\nOBJECT ENCODING {h}many\n")
	b.WriteString("pairs HGETALL {h}many\nsorted HKEYS {h}many\nsorted HVALS {h}many\nHLEN {h}many\n")
	b.WriteString("hscan {h}many\nhscan {h}many COUNT 3\nhscan {h}many MATCH f1* COUNT 7\nhscan {h}s\n")
	b.WriteString("HMGET {h}many f1 f100 nosuch extra\nHDEL {h}many f0 f1 f2\nHLEN {h}many\n")
	b.WriteString("HRANDFIELD {h}many 0\nshape HRANDFIELD {h}many 5\nshape HRANDFIELD {h}many 100 WITHVALUES\n")
	b.WriteString("shape HRANDFIELD {h}many -3 WITHVALUES\n")
	b.WriteString("sorted HRANDFIELD {h}many 1000\nsorted HRANDFIELD {h}many 126 WITHVALUES\n")
	return b.String()
}

func TestListHashSameAsRedis(t *testing.T) {
	replaySameAsRedis(t, lhScript, func(t *testing.T, proto int, theirs, ours *respConn, line string) {
		mode := ""
		for _, m := range []string{"sorted", "pairs", "shape", "hscan"} {
			if rest, ok := strings.CutPrefix(line, m+" "); ok {
				mode, line = m, rest
			}
		}
		args := scriptWords(line)
		switch mode {
		case "hscan":
			want := lhScanAll(t, theirs, args[0], args[1:]...)
			got := lhScanAll(t, ours, args[0], args[1:]...)
			assert.Equal(t, want, got, "RESP%d HSCAN %s", proto, line)
			return
		}
		want, got := theirs.Do(args...), ours.Do(args...)
		switch mode {
		case "sorted":
			want, got = respSorted(t, want), respSorted(t, got)
		case "pairs":
			want, got = lhPairsSorted(t, want), lhPairsSorted(t, got)
		case "shape":
			want, got = lhShape(t, want), lhShape(t, got)
		}
		assert.Equal(t, want, got, "RESP%d %s", proto, line)
	})
}
