package cmdtest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// keysScript is a command sequence replayed against slotd and a real
// redis-server; every reply must be byte-identical (after sorting, for
// replies whose order is unspecified). Multi-key commands use one hash tag
// so they are legal in cluster terms too. Lines split into arguments as
// scriptWords says; a line starting with "sorted " compares its reply with elements sorted,
// "scan " iterates SCAN with the given options and compares the key sets.
var keysScript = `
FLUSHALL
DBSIZE
RANDOMKEY
KEYS *
SET a 1
SET {t}b hello
SET {t}c ` + strings.Repeat("x", 45) + `
SET {t}d ` + strings.Repeat("y", 44) + `
SET '' empty
SET n 12345678901234567890
SET m -9223372036854775808
SET z 007
DBSIZE
sorted KEYS *
sorted KEYS {t}*
KEYS {t}b
KEYS ''
sorted KEYS ?
KEYS nomatch
sorted KEYS *[bc]
sorted KEYS [
KEYS
KEYS a b
TYPE a
TYPE nokey
TYPE
EXISTS a
EXISTS nokey
EXISTS {t}b {t}c {t}b {t}nokey
EXISTS
TOUCH {t}b {t}c {t}zz
TOUCH
DEL nokey
DEL {t}nokey {t}b {t}b
DEL
UNLINK {t}c {t}none
UNLINK
EXISTS {t}b {t}c
SET a 1
EXPIRE a 100
TTL a
EXPIRE a 100 NX
EXPIRE a 100 XX
EXPIRE a 50 GT
EXPIRE a 200 GT
TTL a
EXPIRE a 300 LT
EXPIRE a 150 LT
TTL a
EXPIRE a 10 nx xx
EXPIRE a 10 xx nx
EXPIRE a 10 nx gt
EXPIRE a 10 nx lt
EXPIRE a 10 gt lt
EXPIRE a 10 GT GT
EXPIRE a 10 foo
EXPIRE a 10 nx foo
EXPIRE a abc
EXPIRE a abc foo
EXPIRE a 1.5
EXPIRE a ''
EXPIRE nokey 10
EXPIRE nokey 10 gt lt
EXPIRE a 9223372036854776
EXPIRE a -9223372036854776
PEXPIRE a 9223372036854775807
EXPIREAT a 9223372036854776
EXPIREAT a 9223372036854775
EXPIRETIME a
PEXPIRETIME a
TTL a
PEXPIREAT a 9223372036854775807
EXPIRETIME a
PEXPIRETIME a
PEXPIREAT a 9223372036854775807 nx
EXPIREAT a 4102444800
EXPIRETIME a
PEXPIRETIME a
PEXPIREAT a 4102444800123
EXPIRETIME a
PEXPIRETIME a
PEXPIRE a 100000
TTL a
PERSIST a
PERSIST a
TTL a
PTTL a
EXPIRETIME a
PEXPIRETIME a
TTL nokey
PTTL nokey
EXPIRETIME nokey
PEXPIRETIME nokey
PERSIST nokey
EXPIRE a 10 XX
EXPIRE a 10 GT
EXPIRE a 10 LT
TTL a
EXPIRE a 0
EXISTS a
SET a 1
EXPIRE a -100 LT
EXISTS a
SET a 1
EXPIRE a -100 GT
EXISTS a
EXPIREAT a 1
EXISTS a
SET a 1
PEXPIREAT a 0 nx
EXISTS a
SET a 1
PEXPIRE a -9223372036854775808
EXISTS a
TTL
PERSIST
EXPIRE a
SET {r}a v1
SET {r}b v2
EXPIRE {r}a 1000
RENAME {r}a {r}c
EXISTS {r}a
TTL {r}c
RENAME {r}c {r}b
TTL {r}b
RENAME {r}b {r}b
RENAMENX {r}b {r}b
RENAME {r}none {r}x
RENAME {r}none {r}none
RENAMENX {r}none {r}x
SET {r}x 1
RENAMENX {r}b {r}x
RENAMENX {r}b {r}y
TTL {r}y
sorted KEYS {r}*
RENAME {r}y
SET {c}a hello
EXPIRE {c}a 1000
COPY {c}a {c}b
TTL {c}b
COPY {c}a {c}b
COPY {c}a {c}b REPLACE
COPY {c}a {c}b replace REPLACE
COPY {c}a {c}a
COPY {c}none {c}a
COPY {c}a {c}b foo
COPY {c}a {c}b DB
COPY {c}a {c}b DB x
COPY {c}a {c}b DB 99999999999
COPY {c}a {c}b DB -1
COPY {c}a {c}b DB 16
COPY {c}a {c}b DB 0 REPLACE
COPY {c}a {c}b db 0 db 0 replace
SET {c}a ` + strings.Repeat("v", 100) + `
COPY {c}a {c}b REPLACE
GET {c}b
TTL {c}b
COPY {c}a
SET o1 123
SET o2 9999
SET o3 10000
SET o4 -1
SET o5 1.5
SET o6 ` + strings.Repeat("s", 44) + `
SET o7 ` + strings.Repeat("s", 45) + `
SET o8 01
SET o9 9223372036854775807
SET o10 9223372036854775808
SET o11 ''
SET o12 +1
OBJECT ENCODING o1
OBJECT ENCODING o2
OBJECT ENCODING o3
OBJECT ENCODING o4
OBJECT ENCODING o5
OBJECT ENCODING o6
OBJECT ENCODING o7
OBJECT ENCODING o8
OBJECT ENCODING o9
OBJECT ENCODING o10
OBJECT ENCODING o11
OBJECT ENCODING o12
OBJECT ENCODING nokey
OBJECT REFCOUNT o1
OBJECT REFCOUNT o2
OBJECT REFCOUNT o3
OBJECT REFCOUNT o4
OBJECT REFCOUNT o6
OBJECT REFCOUNT nokey
OBJECT FREQ o1
OBJECT FREQ nokey
OBJECT IDLETIME nokey
OBJECT HELP
OBJECT help
OBJECT HELP extra
OBJECT
OBJECT foo
OBJECT foo bar
OBJECT ENCODING
OBJECT ENCODING a b
FLUSHDB foo
FLUSHDB async sync
FLUSHALL foo
FLUSHALL async sync
FLUSHDB SYNC
DBSIZE
SET a 1
FLUSHALL ASYNC
DBSIZE
SET a 1
FLUSHDB async
DBSIZE
SET a 1
FLUSHALL sync
RANDOMKEY
SET only 1
RANDOMKEY
DBSIZE x
RANDOMKEY x
SCAN
SCAN abc
SCAN ' 1'
SCAN 1x
SCAN -
SCAN +
SCAN 18446744073709551616
SCAN 0 COUNT 0
SCAN 0 COUNT -1
SCAN 0 COUNT abc
SCAN 0 COUNT
SCAN 0 MATCH
SCAN 0 TYPE
SCAN 0 foo bar
SCAN 0 MATCH * foo
SCAN abc COUNT 0
SCAN 0 MATCH nomatch COUNT 100
FLUSHALL
SET k1 1
SET k2 2
SET k10 3
SET {x}1 4
SET {x}2 5
SET '' 6
scan
scan COUNT 1
scan MATCH k*
scan MATCH k? COUNT 2
scan MATCH {x}*
scan MATCH {x}1
scan MATCH k1
scan MATCH ''
scan TYPE ''
scan MATCH '' TYPE string
scan MATCH *
scan TYPE string
scan TYPE STRING
scan TYPE list
scan COUNT 100 TYPE nosuchtype
scan MATCH k* TYPE string COUNT 1000
`

func TestKeysSameAsRedis(t *testing.T) {
	replaySameAsRedis(t, keysScript, func(t *testing.T, proto int, theirs, ours *respConn, line string) {
		mode := ""
		if rest, ok := strings.CutPrefix(line, "sorted "); ok {
			mode, line = "sorted", rest
		} else if rest, ok := strings.CutPrefix(line, "scan"); ok && (rest == "" || rest[0] == ' ') {
			mode, line = "scan", rest
		}
		args := scriptWords(line)
		switch mode {
		case "scan":
			want := keysScanAll(t, theirs, args...)
			got := keysScanAll(t, ours, args...)
			for k := range got {
				got[k] = 1 // duplicates are allowed by SCAN
			}
			for k := range want {
				want[k] = 1
			}
			assert.Equal(t, want, got, "RESP%d SCAN%s", proto, line)
		case "sorted":
			assert.Equal(t, respSorted(t, theirs.Do(args...)), respSorted(t, ours.Do(args...)),
				"RESP%d %s", proto, line)
		default:
			want := theirs.Do(args...)
			got := ours.Do(args...)
			assert.Equal(t, want, got, "RESP%d %s", proto, line)
		}
	})
}
