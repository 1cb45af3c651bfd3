package repl_test

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// fakeReplica speaks the replica side of the protocol by hand and decodes
// the primary's frames into readable commands.
type fakeReplica struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func attachFake(t *testing.T, p *nodetest.Node) *fakeReplica {
	conn, err := net.Dial("tcp", p.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	f := &fakeReplica{t: t, conn: conn, br: bufio.NewReader(conn)}
	require.Equal(t, "+OK", f.call("REPLCONF", "capa", "slotd"))
	require.True(t, strings.HasPrefix(f.call("PSYNC", "?", "-1"), "+FULLRESYNC "))
	return f
}

func (f *fakeReplica) call(args ...string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	_, err := f.conn.Write([]byte(b.String()))
	require.NoError(f.t, err)
	line, err := f.br.ReadString('\n')
	require.NoError(f.t, err)
	return strings.TrimRight(line, "\r\n")
}

// next returns the next frame's kind and its records as "CMD arg ..."
// strings.
func (f *fakeReplica) next() (byte, []string) {
	_ = f.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var hdr [15]byte
	_, err := io.ReadFull(f.br, hdr[:])
	require.NoError(f.t, err)
	payload := make([]byte, binary.LittleEndian.Uint32(hdr[11:]))
	_, err = io.ReadFull(f.br, payload)
	require.NoError(f.t, err)
	var cmds []string
	for len(payload) >= 6 {
		n := int(binary.LittleEndian.Uint32(payload[2:]))
		cmds = append(cmds, decodeRESP(f.t, payload[6:6+n]))
		payload = payload[6+n:]
	}
	return hdr[0], cmds
}

func decodeRESP(t *testing.T, p []byte) string {
	r := bufio.NewReader(strings.NewReader(string(p)))
	line, _ := r.ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	require.NoError(t, err)
	parts := make([]string, n)
	for i := range parts {
		line, _ = r.ReadString('\n')
		l, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		b := make([]byte, l+2)
		_, _ = io.ReadFull(r, b)
		parts[i] = string(b[:l])
	}
	return strings.Join(parts, " ")
}

// stream collects stream records until want of them arrived.
func (f *fakeReplica) stream(want int) []string {
	var out []string
	for len(out) < want {
		kind, cmds := f.next()
		if kind == 'S' {
			out = append(out, cmds...)
		}
	}
	return out
}

// TestStreamForms: what a replica receives for commands whose replicated
// form is rewritten, and that reads stream nothing.
func TestStreamForms(t *testing.T) {
	p := start(t, 1)
	f := attachFake(t, p)
	kind, _ := f.next() // the (empty) dataset is synced at once
	require.Equal(t, byte('E'), kind)
	c := p.Client(t, 2)
	ms := regexp.MustCompile(`^\d{13}$`)
	check := func(want []string, run func()) {
		t.Helper()
		run()
		got := f.stream(len(want))
		require.Len(t, got, len(want))
		for i, w := range want {
			if strings.Contains(w, "<ms>") {
				prefix, _, _ := strings.Cut(w, "<ms>")
				require.True(t, strings.HasPrefix(got[i], prefix), "%q vs %q", got[i], w)
				assert.Regexp(t, ms, strings.TrimPrefix(got[i], prefix))
				continue
			}
			assert.Equal(t, w, got[i])
		}
	}
	check([]string{"SET k v PXAT <ms>"}, func() { c.Set(ctx, "k", "v", time.Hour) })
	check([]string{"SET k1 v PXAT <ms>"}, func() { c.Do(ctx, "SET", "k1", "v", "NX", "GET", "EX", "100") })
	check([]string{"SET k v PXAT <ms>"}, func() { c.SetEx(ctx, "k", "v", time.Hour) })
	check([]string{"SET k v KEEPTTL"}, func() { c.Do(ctx, "SET", "k", "v", "XX", "KEEPTTL") })
	check([]string{"SET k v"}, func() { c.Do(ctx, "SET", "k", "v", "XX") })
	check([]string{"set k w"}, func() { c.Get(ctx, "k"); c.Set(ctx, "k", "w", 0) })
	check([]string{"PEXPIREAT k <ms>"}, func() { c.Expire(ctx, "k", time.Hour) })
	check([]string{"PEXPIREAT k <ms>"}, func() { c.Do(ctx, "GETEX", "k", "EX", "100") })
	check([]string{"PERSIST k"}, func() { c.Do(ctx, "EXPIRE", "nokey", "10"); c.Do(ctx, "GETEX", "k", "PERSIST") })
	check([]string{"DEL k"}, func() { c.Expire(ctx, "k", -time.Second) })
	check([]string{"SET f 1.5 KEEPTTL"}, func() { c.IncrByFloat(ctx, "f", 1.5) })
	check([]string{"HSET h x 2.5"}, func() { c.HIncrByFloat(ctx, "h", "x", 2.5) })
	check([]string{"sadd s a", "SREM s a"}, func() { c.SAdd(ctx, "s", "a"); c.SPop(ctx, "s") })
	check([]string{"rpush l a b", "LPOP l", "LMOVE l {l}2 RIGHT LEFT"}, func() {
		c.RPush(ctx, "l", "a", "b")
		c.BLPop(ctx, time.Second, "{l}none", "l")
		c.BLMove(ctx, "l", "{l}2", "RIGHT", "LEFT", time.Second)
	})
	check([]string{"zadd z 1 a", "ZPOPMIN z 1"}, func() {
		c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"})
		c.BZPopMin(ctx, time.Second, "z")
	})
	// A key past its TTL is deleted by the access that finds it: DEL
	// first, then the write.
	check([]string{"SET old v PXAT <ms>", "DEL old", "set old new"}, func() {
		c.Do(ctx, "SET", "old", "v", "PXAT", time.Now().Add(-time.Minute).UnixMilli())
		c.Do(ctx, "SET", "old", "new", "XX") // XX: the key counts as missing
		c.Set(ctx, "old", "new", 0)
	})
	// Scripts replicate their effects, wrapped in MULTI/EXEC; transactions
	// too.
	check([]string{"MULTI", "SET {a}1 1", "SREM {a}s x", "EXEC"}, func() {
		c.SAdd(ctx, "{a}s", "x")
		f.stream(1)
		c.Eval(ctx, "redis.call('SET', KEYS[1], '1'); redis.call('SPOP', KEYS[2]); return redis.call('GET', KEYS[1])",
			[]string{"{a}1", "{a}s"})
	})
	check([]string{"MULTI", "set a 2", "PEXPIREAT a <ms>", "EXEC"}, func() {
		c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "a", "2", 0)
			p.Get(ctx, "a")
			p.Expire(ctx, "a", time.Hour)
			return nil
		})
	})
	check([]string{"set b 1"}, func() { // a one-write transaction needs no wrapping
		c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "b", "1", 0)
			p.Get(ctx, "b")
			return nil
		})
	})
	flushed := f.stream(0)
	require.Empty(t, flushed)
	c.FlushAll(ctx)
	got := f.stream(1)
	assert.Regexp(t, `^FLUSHSLOTS( \d+)+$`, got[0])
}

// TestChainedReplica: a replica of a replica gets the same data.
func TestChainedReplica(t *testing.T) {
	p := start(t, 2)
	r1 := start(t, 2)
	r2 := start(t, 3)
	workload(t, p.Client(t), 1)
	replicate(t, r1, p)
	replicate(t, r2, r1)
	workload(t, p.Client(t), 2)
	waitConverged(t, p, r1)
	waitConverged(t, p, r2)
}

// TestLinkCutDuringFullSync: a full sync interrupted by a link cut is
// started again, and completes.
func TestLinkCutDuringFullSync(t *testing.T) {
	p := start(t, 4)
	r := start(t, 2)
	pc := p.Client(t, 2)
	pipe := pc.Pipeline()
	val := strings.Repeat("x", 200)
	for i := 0; i < 50000; i++ {
		pipe.Set(ctx, "k"+strconv.Itoa(i), val, 0)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	rc := r.Client(t, 2)
	require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, pc, "replication", "connected_slaves") == "1"
	}, "replica connected")
	require.NoError(t, pc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err())
	waitUp(t, r)
	waitConverged(t, p, r)
	assert.Equal(t, int64(50000), rc.DBSize(ctx).Val())
}

// TestPublishReachesReplica: PUBLISH on a standalone primary is delivered
// to the replica's subscribers too, as in Redis.
func TestPublishReachesReplica(t *testing.T) {
	p := start(t, 2)
	r := start(t, 2)
	replicate(t, r, p)
	sub := r.Client(t).Subscribe(ctx, "news")
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	require.NoError(t, p.Client(t).Publish(ctx, "news", "hello").Err())
	msg, err := sub.ReceiveMessage(ctx)
	require.NoError(t, err)
	assert.Equal(t, "hello", msg.Payload)
}
