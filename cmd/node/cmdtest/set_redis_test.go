package cmdtest_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// szSetScript is replayed against a real redis-server and slotd, in RESP2
// and RESP3 (see szRun for the line modes). Keys share the hash tag {s}.
var szSetScript = `
SADD {s}a 3 1 2
SADD {s}a 2 5 -7
SMEMBERS {s}a
OBJECT ENCODING {s}a
SADD {s}a 01
OBJECT ENCODING {s}a
sorted SMEMBERS {s}a
SADD {s}i 9223372036854775807 -9223372036854775808 0
SMEMBERS {s}i
SADD {s}i 9223372036854775808
OBJECT ENCODING {s}i
SADD {s}n -0
OBJECT ENCODING {s}n
SADD {s}n 0
OBJECT ENCODING {s}n
SADD {s}h x y z
OBJECT ENCODING {s}h
SADD {s}h 1
sorted SMEMBERS {s}h
SADD {s}a
SADD
SMEMBERS
SMEMBERS {s}a {s}h
SMEMBERS {s}none
SCARD {s}a
SCARD {s}none
SCARD
SISMEMBER {s}a 3
SISMEMBER {s}a 4
SISMEMBER {s}a 01
SISMEMBER {s}none 1
SISMEMBER {s}a
SMISMEMBER {s}a 1 2 4 01
SMISMEMBER {s}none a b
SMISMEMBER {s}a
SET {s}str v
SADD {s}str a
SREM {s}str a
SCARD {s}str
SISMEMBER {s}str a
SMISMEMBER {s}str a
SMEMBERS {s}str
SRANDMEMBER {s}str
SRANDMEMBER {s}str 2
SPOP {s}str
SPOP {s}str 2
SSCAN {s}str 0
SINTER {s}a {s}str
SINTER {s}none {s}str
SUNION {s}a {s}str
SDIFF {s}none {s}str
SINTERSTORE {s}d {s}a {s}str
SINTERCARD 2 {s}a {s}str
SREM {s}a 3 4 01
sorted SMEMBERS {s}a
SREM {s}none 1
SREM {s}a
SADD {s}one x
SREM {s}one x y
EXISTS {s}one
SADD {s}two 1 2
SREM {s}two 1 2 3
EXISTS {s}two
SADD {s}m1 1 2 3
SADD {s}m2 a
SMOVE {s}none {s}m1 1
SMOVE {s}none {s}str 1
SMOVE {s}m1 {s}str 1
SMOVE {s}str {s}m1 1
SMOVE {s}m1 {s}m1 1
SMOVE {s}m1 {s}m1 9
SMOVE {s}m1 {s}m2 9
SMOVE {s}m1 {s}m2 1
sorted SMEMBERS {s}m2
SMEMBERS {s}m1
SMOVE {s}m1 {s}new 2
OBJECT ENCODING {s}new
SMOVE {s}m2 {s}new2 a
OBJECT ENCODING {s}new2
SMOVE {s}m1 {s}new 3
EXISTS {s}m1
SMEMBERS {s}new
SMOVE {s}m1 {s}new
DEL {s}a {s}b {s}c {s}d {s}e
SADD {s}a 1 2 3 4 5 6
SADD {s}b 4 5 6 7 8
SADD {s}c x 5 6 y
SINTER {s}a {s}b
sorted SINTER {s}a {s}b {s}c
sorted SINTER {s}c {s}a
SINTER {s}a {s}a
SINTER {s}a {s}none
SINTER {s}none {s}a {s}str
SINTER {s}a {s}str {s}none
SINTER
SUNION {s}a {s}b
sorted SUNION {s}a {s}c
SUNION {s}none
SUNION {s}a {s}none {s}b
SDIFF {s}a {s}b
SDIFF {s}a {s}c
SDIFF {s}a {s}a
SDIFF {s}a {s}b {s}a
SDIFF {s}none {s}a
SDIFF {s}a {s}none
sorted SDIFF {s}c {s}a
sorted SDIFF {s}c {s}a {s}b
SET {s}d str
EXPIRE {s}d 100
SINTERSTORE {s}d {s}a {s}b
TYPE {s}d
TTL {s}d
SMEMBERS {s}d
OBJECT ENCODING {s}d
SINTERSTORE {s}d {s}a {s}none
EXISTS {s}d
SINTERSTORE {s}d {s}none
SINTERSTORE {s}d {s}a {s}str
SUNIONSTORE {s}d {s}a {s}b
SMEMBERS {s}d
SUNIONSTORE {s}d {s}a {s}c
OBJECT ENCODING {s}d
sorted SMEMBERS {s}d
SUNIONSTORE {s}d {s}none
EXISTS {s}d
SDIFFSTORE {s}d {s}a {s}b
SMEMBERS {s}d
SDIFFSTORE {s}d {s}c {s}a
OBJECT ENCODING {s}d
SDIFFSTORE {s}d {s}a {s}a
EXISTS {s}d
SDIFFSTORE {s}d {s}a {s}str
SINTERSTORE {s}a {s}a {s}b
SMEMBERS {s}a
SINTERSTORE {s}d
SINTERCARD 2 {s}a {s}b
SINTERCARD 1 {s}c
SINTERCARD 3 {s}a {s}b {s}c
SINTERCARD 2 {s}a {s}none
SINTERCARD 2 {s}a {s}b LIMIT 1
SINTERCARD 2 {s}a {s}b LIMIT 0
SINTERCARD 2 {s}a {s}b LIMIT -1
SINTERCARD 2 {s}a {s}b LIMIT x
SINTERCARD 2 {s}a {s}b LIMIT
SINTERCARD 2 {s}a {s}b LIMIT 1 LIMIT 2
SINTERCARD 2 {s}a {s}b FOO
SINTERCARD 0 {s}a
SINTERCARD -1 {s}a
SINTERCARD x {s}a
SINTERCARD 3 {s}a {s}b
SINTERCARD 1
SPOP {s}none
SPOP {s}none 3
SPOP {s}none 0
SPOP {s}a -1
SPOP {s}a x
SPOP {s}a 1 2
SPOP {s}none -1
SADD {s}p 1 2 3
SPOP {s}p 0
SPOP {s}p 3
EXISTS {s}p
SADD {s}p 10 2 30 4
SPOP {s}p 100
SADD {s}p a b c
sorted SPOP {s}p 3
SADD {s}p a
SPOP {s}p
EXISTS {s}p
SADD {s}p a b c d e f g h i j
shape SPOP {s}p 1
shape SPOP {s}p 2
shape SPOP {s}p 6
SCARD {s}p
shape SPOP {s}p
SCARD {s}p
SRANDMEMBER {s}none
SRANDMEMBER {s}none 5
SRANDMEMBER {s}none -5
SRANDMEMBER {s}none 0
SRANDMEMBER {s}a 0
SRANDMEMBER {s}a x
SRANDMEMBER {s}none x
SRANDMEMBER {s}a -9223372036854775808
SRANDMEMBER {s}a 9223372036854775808
SRANDMEMBER {s}a 1 2
SADD {s}r 1 2 3 4 5 6 7 8 9 10
shape SRANDMEMBER {s}r
shape SRANDMEMBER {s}r 1
shape SRANDMEMBER {s}r 3
shape SRANDMEMBER {s}r 5
shape SRANDMEMBER {s}r -20
SRANDMEMBER {s}r 10
SRANDMEMBER {s}r 100
SSCAN {s}r 0
SSCAN {s}r 0 COUNT 1
SSCAN {s}r 0 MATCH 1*
SSCAN {s}r 0 MATCH * COUNT 100
SSCAN {s}none 0
SSCAN {s}none 0 COUNT 0
SSCAN {s}none x
SSCAN {s}r x
SSCAN {s}r -1
SSCAN {s}r ''
SSCAN {s}r ' 1'
SSCAN {s}r 18446744073709551616
SSCAN {s}r 0 COUNT 0
SSCAN {s}r 0 COUNT -1
SSCAN {s}r 0 COUNT x
SSCAN {s}r 0 COUNT
SSCAN {s}r 0 MATCH
SSCAN {s}r 0 TYPE set
SSCAN {s}r 0 FOO bar
SSCAN {s}str 0
SSCAN {s}str x
SSCAN {s}r
SADD {s}hs a b c d e f 1 2 3
scan SSCAN {s}hs
scan SSCAN {s}hs COUNT 2
scan SSCAN {s}hs MATCH [a-c]
CONFIG SET set-max-intset-entries 4
SADD {s}lim 1 2 3 4
OBJECT ENCODING {s}lim
SADD {s}lim 5
OBJECT ENCODING {s}lim
SREM {s}lim 5
OBJECT ENCODING {s}lim
sorted SMEMBERS {s}lim
SUNIONSTORE {s}lim2 {s}lim
OBJECT ENCODING {s}lim2
SINTERSTORE {s}lim3 {s}lim {s}lim
OBJECT ENCODING {s}lim3
SPOP {s}lim 100
CONFIG SET set-max-intset-entries 512
SADD {s}cp 1 2 3
COPY {s}cp {s}cp2
SMEMBERS {s}cp2
OBJECT ENCODING {s}cp2
SADD {s}cp2 x
SMEMBERS {s}cp
RENAME {s}cp {s}cp3
SMEMBERS {s}cp3
TYPE {s}cp3
`

// szBigIntSetLines builds and checks a set crossing set-max-intset-entries
// (512) one member at a time.
func szBigIntSetLines() []string {
	var ints []string
	for i := 600; i > 0; i-- {
		ints = append(ints, strconv.Itoa(i*7%1000-300))
	}
	return []string{
		"SADD {s}big " + strings.Join(ints[:511], " "),
		"OBJECT ENCODING {s}big",
		"SMEMBERS {s}big",
		"SADD {s}big " + ints[511],
		"OBJECT ENCODING {s}big",
		"SCARD {s}big",
		"SMEMBERS {s}big",
		"SSCAN {s}big 0",
		"SADD {s}big " + strings.Join(ints[512:], " "),
		"OBJECT ENCODING {s}big",
		"sorted SMEMBERS {s}big",
		"scan SSCAN {s}big",
		"scan SSCAN {s}big COUNT 50 MATCH *1",
		"SINTERSTORE {s}bigi {s}big {s}big",
		"OBJECT ENCODING {s}bigi",
		"SDIFFSTORE {s}bigd {s}big {s}a",
		"OBJECT ENCODING {s}bigd",
		"SREM {s}big " + strings.Join(ints[100:], " "),
		"OBJECT ENCODING {s}big",
		"sorted SMEMBERS {s}big",
		"SUNION {s}big",
		"SUNIONSTORE {s}bigu {s}big",
		"OBJECT ENCODING {s}bigu",
		"SPOP {s}big 1000",
	}
}

func TestSetsSameAsRedis(t *testing.T) {
	szSameAsRedis(t, append(strings.Split(strings.TrimSpace(szSetScript), "\n"), szBigIntSetLines()...))
}

// szRandomSetOps plays random set commands over a few keys against both
// servers, comparing every reply and, after each command, the content and
// encoding of every key.
func TestSetsRandomSameAsRedis(t *testing.T) {
	raddr := nodetest.StartRedis(t)
	n := shardsNode(t)
	seed, ops := szSeed(11, 400)
	r := rand.New(rand.NewPCG(seed, 12))
	keys := []string{"{r}a", "{r}b", "{r}c", "{r}d"}
	members := []string{"1", "2", "3", "-4", "10", "100", "a", "b", "c", "x1", "01", "9223372036854775807"}
	key := func() string { return keys[r.IntN(len(keys))] }
	some := func(min int) string {
		n := min + r.IntN(4)
		out := make([]string, n)
		for i := range out {
			if r.IntN(5) == 0 {
				out[i] = strconv.Itoa(r.IntN(40))
			} else {
				out[i] = members[r.IntN(len(members))]
			}
		}
		return strings.Join(out, " ")
	}
	keyList := func() string {
		n := 1 + r.IntN(3)
		out := make([]string, n)
		for i := range out {
			out[i] = key()
		}
		return strings.Join(out, " ")
	}
	gen := func() string {
		switch r.IntN(16) {
		case 0, 1, 2, 3:
			return "SADD " + key() + " " + some(1)
		case 4, 5:
			return "SREM " + key() + " " + some(1)
		case 6:
			return "SMOVE " + key() + " " + key() + " " + some(1)[:1]
		case 7:
			return "sorted SINTER " + keyList()
		case 8:
			return "sorted SUNION " + keyList()
		case 9:
			return "sorted SDIFF " + keyList()
		case 10:
			op := []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[r.IntN(3)]
			return op + " " + key() + " " + keyList()
		case 11:
			ks := keyList()
			return fmt.Sprintf("SINTERCARD %d %s LIMIT %d", len(strings.Fields(ks)), ks, r.IntN(4))
		case 12:
			return "SMISMEMBER " + key() + " " + some(1)
		case 13:
			return "sorted SPOP " + key() + " 1000" // the whole set: deterministic
		case 14:
			return "shape SRANDMEMBER " + key() + " " + strconv.Itoa(r.IntN(9)-4)
		default:
			return "SISMEMBER " + key() + " " + some(1)[:1]
		}
	}
	szRandomRun(t, raddr, n.Addr, ops, func(*respConn) string { return gen() }, keys, func(k string) []string {
		return []string{"sorted SMEMBERS " + k, "OBJECT ENCODING " + k}
	})
}
