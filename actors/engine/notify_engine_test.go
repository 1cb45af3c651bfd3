package engine_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/enginetest"
	"github.com/slotd/slotd/netio/config"
)

// eventLog records keyspace events as "db event key" (keyevent channel
// only, so one line per event) or "K db key event" for keyspace ones.
type eventLog struct{ got []string }

func (l *eventLog) KeyspaceEvent(db int, event string, key []byte, keyspace, keyevent bool) {
	d := strconv.Itoa(db)
	if keyspace {
		l.got = append(l.got, "K "+d+" "+string(key)+" "+event)
	}
	if keyevent {
		l.got = append(l.got, d+" "+event+" "+string(key))
	}
}

func (l *eventLog) take() []string {
	g := l.got
	l.got = nil
	return g
}

// notifyEngine is an engine whose keyspace events (classes as
// notify-keyspace-events spells them) go to the returned log.
func notifyEngine(t *testing.T, classes string) (*enginetest.Engine, *eventLog) {
	t.Helper()
	e := newEngine(t)
	log := &eventLog{}
	g := e.Shard().Group()
	g.Notify.Notifier = log
	c := config.New()
	if err := c.Set([2]string{"notify-keyspace-events", classes}); err != nil {
		t.Fatal(err)
	}
	g.Notify.Flags.Store(c.Int("notify-keyspace-events"))
	return e, log
}

// step is one command and the events it must fire, in order.
type step struct {
	cmd    string
	events string // "event key, event key"; "" for none
}

func runSteps(t *testing.T, c *enginetest.Client, log *eventLog, steps []step) {
	t.Helper()
	for _, s := range steps {
		reply := c.Do(strings.Fields(s.cmd)...)
		var want []string
		if s.events != "" {
			for _, ev := range strings.Split(s.events, ", ") {
				if ev[0] < '0' || ev[0] > '9' {
					ev = "0 " + ev // the default database
				}
				want = append(want, ev)
			}
		}
		assert.Equal(t, want, log.take(), "%s (reply %q)", s.cmd, reply)
	}
}

func TestNotifyGenericAndString(t *testing.T) {
	e, log := notifyEngine(t, "EAn")
	c := e.Client(2)
	runSteps(t, c, log, []step{
		{"SET foo bar", "new foo, set foo"},
		{"SET foo baz", "set foo"},
		{"SET foo v EX 100", "set foo, expire foo"},
		{"SET foo v NX", ""},
		{"GETSET foo w", "set foo"},
		{"EXPIRE foo 100", "expire foo"},
		{"PERSIST foo", "persist foo"},
		{"PERSIST foo", ""},
		{"EXPIRE nokey 100", ""},
		{"MSET {m}a 1 {m}b 2", "new {m}a, set {m}a, new {m}b, set {m}b"},
		{"MSETNX {m}a 1 {m}c 2", ""},
		{"INCR n", "new n, incrby n"},
		{"DECRBY n 3", "incrby n"},
		{"INCRBYFLOAT n 1.5", "incrbyfloat n"},
		{"APPEND ap x", "new ap, append ap"},
		{"APPEND ap y", "append ap"},
		{"SETRANGE ap 5 z", "setrange ap"},
		{"SETRANGE ap 0 ", ""},
		{"SETBIT bits 3 1", "new bits, setbit bits"},
		{"SETBIT bits 3 1", ""},
		{"BITFIELD bits SET u8 0 255", "setbit bits"},
		{"BITOP NOT {b}d {b}s", ""},
		{"SET {b}s a", "new {b}s, set {b}s"},
		{"BITOP NOT {b}d {b}s", "new {b}d, set {b}d"},
		{"DEL {b}s", "del {b}s"},
		{"BITOP NOT {b}d {b}s", "del {b}d"},
		{"PFADD hll a", "new hll, pfadd hll"},
		{"PFADD hll a", ""},
		{"GETEX foo PX 5000", "expire foo"},
		{"GETEX foo PERSIST", "persist foo"},
		{"GETDEL foo", "del foo"},
		{"SET {r}a 1", "new {r}a, set {r}a"},
		{"RENAME {r}a {r}b", "new {r}b, rename_from {r}a, rename_to {r}b"},
		{"COPY {r}b {r}c", "new {r}c, copy_to {r}c"},
		{"MOVE {r}c 1", "1 new {r}c, move_from {r}c, 1 move_to {r}c"},
		{"DEL {r}b {r}x {r}c", "del {r}b"},
		{"SET e 1", "new e, set e"},
		{"PEXPIRE e -1", "del e"},
	})
}

func TestNotifyMoveAndRestore(t *testing.T) {
	e, log := notifyEngine(t, "KEA")
	c := e.Client(2)
	c.Do("SET", "k", "v")
	log.take()
	c.Do("MOVE", "k", "3")
	assert.Equal(t, []string{"K 0 k move_from", "0 move_from k", "K 3 k move_to", "3 move_to k"}, log.take(),
		"both channels, each event in its database; no 'new' without n")
	c.Do("SET", "k", "v")
	dump := c.Do("DUMP", "k")
	log.take()
	payload := dump[strings.Index(dump, "\r\n")+2 : len(dump)-2]
	c.Do("RESTORE", "k", "0", payload, "REPLACE")
	assert.Equal(t, []string{"K 0 k restore", "0 restore k"}, log.take())
}

func TestNotifyExpired(t *testing.T) {
	e, log := notifyEngine(t, "Exm")
	c := e.Client(2)
	c.Do("PSETEX", "lazy", "10", "v")
	c.Do("SET", "other", "v")
	assert.Empty(t, log.take())
	e.Shard().Group().NoActiveExpire.Store(true)
	e.Advance(50 * time.Millisecond)
	assert.Empty(t, log.take(), "no active expiry")
	c.Do("GET", "lazy")
	assert.Equal(t, []string{"0 expired lazy", "0 keymiss lazy"}, log.take(), "lazy expiry, then the miss")
	e.Shard().Group().NoActiveExpire.Store(false)
	c.Do("PSETEX", "active", "10", "v")
	e.Advance(time.Second)
	assert.Equal(t, []string{"0 expired active"}, log.take(), "active expiry")
}

func TestNotifyOffRecordsNothing(t *testing.T) {
	e, log := notifyEngine(t, "")
	c := e.Client(2)
	c.Do("SET", "a", "b")
	c.Do("DEL", "a")
	assert.Empty(t, log.take())
	g := e.Shard().Group()
	g.Notify.Flags.Store(engine.NotifyGeneric) // a class but neither K nor E
	c.Do("SET", "a", "b")
	c.Do("DEL", "a")
	assert.Empty(t, log.take())
}

func TestNotifyList(t *testing.T) {
	e, log := notifyEngine(t, "Eg$ln")
	c := e.Client(2)
	runSteps(t, c, log, []step{
		{"LPUSHX l a", ""},
		{"RPUSH l a b c", "new l, rpush l"},
		{"LPUSH l z", "lpush l"},
		{"LSET l 0 y", "lset l"},
		{"LINSERT l BEFORE a x", "linsert l"},
		{"LINSERT l BEFORE nope x", ""},
		{"LREM l 0 nope", ""},
		{"LREM l 1 x", "lrem l"},
		{"LTRIM l 0 -1", "ltrim l"},
		{"RPOP l", "rpop l"},
		{"LPOP l 2", "lpop l"},
		{"LMOVE l {l}d RIGHT LEFT", "new {l}d, lpush {l}d, rpop l, del l"},
		{"RPOPLPUSH {l}d {l}d", "lpush {l}d, rpop {l}d"},
		{"LMPOP 2 {l}x {l}d LEFT", "lpop {l}d, del {l}d"},
		{"RPUSH l a b", "new l, rpush l"},
		{"LTRIM l 5 6", "ltrim l, del l"},
	})
	// A blocked pop is served after the push that woke it: the push's
	// event, then the pop's and the deletion of the emptied list.
	b := e.Client(2)
	b.Send("BLPOP", "bl", "0")
	assert.True(t, b.Blocked())
	runSteps(t, c, log, []step{{"RPUSH bl v", "new bl, rpush bl, lpop bl, del bl"}})
	assert.Equal(t, "*2\r\n$2\r\nbl\r\n$1\r\nv\r\n", b.Reply())
	b.Send("BLMOVE", "{m}s", "{m}d", "LEFT", "RIGHT", "0")
	runSteps(t, c, log, []step{{"LPUSH {m}s v", "new {m}s, lpush {m}s, new {m}d, rpush {m}d, lpop {m}s, del {m}s"}})
	b.Reply()
}

func TestNotifyHashSetZSet(t *testing.T) {
	e, log := notifyEngine(t, "Ehszgn")
	c := e.Client(2)
	runSteps(t, c, log, []step{
		{"HSET h a 1 b 2", "new h, hset h"},
		{"HMSET h a 1", "hset h"},
		{"HSETNX h a 1", ""},
		{"HSETNX h c 1", "hset h"},
		{"HINCRBY h a 10", "hincrby h"},
		{"HINCRBYFLOAT h a 0.5", "hincrbyfloat h"},
		{"HDEL h nope", ""},
		{"HDEL h a b", "hdel h"},
		{"HDEL h c", "hdel h, del h"},

		{"SADD s a b c d", "new s, sadd s"},
		{"SADD s a", ""},
		{"SREM s x", ""},
		{"SREM s a", "srem s"},
		{"SMOVE s {s}d b", "srem s, new {s}d, sadd {s}d"},
		{"SINTERSTORE {s}i s {s}d", ""}, // empty, and {s}i did not exist
		{"SUNIONSTORE {s}u s {s}d", "new {s}u, sunionstore {s}u"},
		{"SDIFFSTORE {s}u s {s}d", "sdiffstore {s}u"},
		{"SINTERSTORE {s}u s {s}nope", "del {s}u"},
		{"SPOP s 1", "spop s"},
		{"SPOP s 5", "spop s, del s"},
		{"SPOP {s}d", "spop {s}d, del {s}d"},

		{"ZADD z 1 a 2 b", "new z, zadd z"},
		{"ZADD z 1 a", ""},
		{"ZADD z INCR 5 a", "zincr z"},
		{"ZINCRBY z 1 b", "zincr z"},
		{"ZREM z x", ""},
		{"ZREM z a", "zrem z"},
		{"ZADD z 3 c 4 d 5 e", "zadd z"},
		{"ZREMRANGEBYSCORE z 100 200", ""},
		{"ZREMRANGEBYSCORE z 3 3", "zremrangebyscore z"},
		{"ZREMRANGEBYRANK z 0 0", "zremrangebyrank z"},
		{"ZUNIONSTORE {z}u 1 z", "new {z}u, zunionstore {z}u"},
		{"ZADD {z}a 1 x 2 y", "new {z}a, zadd {z}a"},
		{"ZUNIONSTORE {z}u 1 {z}a", "zunionstore {z}u"},
		{"ZINTERSTORE {z}u 1 {z}a", "zinterstore {z}u"},
		{"ZDIFFSTORE {z}u 2 {z}a {z}a", "del {z}u"},
		{"ZRANGESTORE {z}r {z}a 0 -1", "new {z}r, zrangestore {z}r"},
		{"ZPOPMIN {z}a", "zpopmin {z}a"},
		{"ZPOPMAX {z}a 5", "zpopmax {z}a, del {z}a"},
		{"ZREMRANGEBYLEX {z}r - +", "zremrangebylex {z}r, del {z}r"},
		{"GEOADD {g}g 13.361389 38.115556 Palermo", "new {g}g, zadd {g}g"},
		{"GEOSEARCHSTORE {g}d {g}g FROMLONLAT 15 37 BYRADIUS 200 km", "new {g}d, geosearchstore {g}d"},
		{"GEORADIUS {g}g 15 37 200 km STORE {g}d", "georadiusstore {g}d"},
		{"GEORADIUS {g}g 15 37 1 km STORE {g}d", "del {g}d"},
	})
}

func TestNotifyStreamAndSort(t *testing.T) {
	e, log := notifyEngine(t, "Etlgn")
	c := e.Client(2)
	runSteps(t, c, log, []step{
		{"XGROUP CREATE st g $ MKSTREAM", "new st, xgroup-create st"},
		{"XGROUP CREATECONSUMER st g Bob", "xgroup-createconsumer st"},
		{"XGROUP CREATECONSUMER st g Bob", ""},
		{"XADD st 1 f v", "xadd st"},
		{"XADD st MAXLEN 1 2 f v", "xadd st, xtrim st"},
		{"XREADGROUP GROUP g Alice STREAMS st >", "xgroup-createconsumer st"},
		{"XCLAIM st g Mike 0 2", "xgroup-createconsumer st"},
		{"XGROUP DELCONSUMER st g Lee", ""},
		{"XAUTOCLAIM st g Bob 0 2", ""},
		{"XGROUP DELCONSUMER st g Bob", "xgroup-delconsumer st"},
		{"XGROUP SETID st g 0", "xgroup-setid st"},
		{"XDEL st 9", ""},
		{"XDEL st 2", "xdel st"},
		{"XADD st 3 f v", "xadd st"},
		{"XTRIM st MAXLEN 0", "xtrim st"},
		{"XSETID st 10", "xsetid st"},
		{"XGROUP DESTROY st g", "xgroup-destroy st"},
		{"RPUSH {l}l 3 1 2", "new {l}l, rpush {l}l"},
		{"SORT {l}l STORE {l}d", "new {l}d, sortstore {l}d"},
		{"SORT {l}nope STORE {l}d", "del {l}d"},
	})
}

type discardEvents struct{}

func (discardEvents) KeyspaceEvent(int, string, []byte, bool, bool) {}

// With notifications off an event costs a flag test and no allocation;
// on, the shard's event buffer is reused from turn to turn.
func TestNotifyAllocations(t *testing.T) {
	e := newEngine(t)
	s := e.Shard()
	g := s.Group()
	g.Notify.Notifier = discardEvents{}
	c := engine.NewCall(s, nil, 0, 0, "SET", "key", "v")
	key := c.Args[1]
	assert.Zero(t, testing.AllocsPerRun(100, func() { c.Notify(engine.NotifyString, "set", key) }))
	g.Notify.Flags.Store(engine.NotifyString | config.NotifyKeyspace | config.NotifyKeyevent)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		c.Notify(engine.NotifyString, "set", key)
		c.Notify(engine.NotifyGeneric, "expire", key) // class off: not recorded
		s.EndTurn()
	}))
}

// A key the maxmemory policy evicts fires 'evicted' (class e) before the
// events of the command that needed the room.
func TestNotifyEvicted(t *testing.T) {
	e, log := notifyEngine(t, "Ee$")
	c := e.Client(2)
	sh := e.Shard()
	g := sh.Group()
	g.SetPolicy(engine.ParsePolicy("allkeys-lru"))
	c.Do("SET", "foo", "bar")
	log.take()
	g.MaxMemory.Store(sh.Stats.Used.Load() - 1)
	c.Do("SET", "other", "value")
	assert.Equal(t, []string{"0 evicted foo", "0 set other"}, log.take())
}
