package netio_test

import (
	"context"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// infoInt reads one integer field of INFO <section>.
func infoInt(t *testing.T, info, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in INFO", field)
	return 0
}

// A subscriber that never reads is disconnected at the default pubsub hard
// limit (32mb) while a publisher pushes up to 200 MB at it, and the node's
// heap stays bounded meanwhile. Not parallel: allocator_allocated is the
// test process's heap, other tests would add to it. The heap is read after a GC
// so that it shows what the node holds, not garbage the collector has not
// reached yet (that depends on how busy the machine is).
func TestPubSubNeverReadingSubscriberBounded(t *testing.T) {
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n", w.do("SUBSCRIBE", "c"))
	pub := n.Client(t)
	ctx := context.Background()
	liveHeap := func() int64 {
		runtime.GC()
		return infoInt(t, pub.Info(ctx, "memory").Val(), "allocator_allocated")
	}
	base := liveHeap()
	msg := strings.Repeat("x", 64<<10)
	const total = 200 << 20
	sent, peak, omem, recentMax := 0, int64(0), int64(0), int64(0)
	gone := false
	for sent < total && !gone {
		p := pub.Pipeline()
		for i := 0; i < 16; i++ {
			p.Publish(ctx, "c", msg)
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
		sent += 16 * len(msg)
		peak = max(peak, liveHeap())
		recentMax = max(recentMax, infoInt(t, pub.Info(ctx, "clients").Val(), "client_recent_max_output_buffer"))
		for _, line := range strings.Split(pub.ClientList(ctx).Val(), "\n") {
			if strings.Contains(line, " sub=1 ") {
				_, v, _ := strings.Cut(line, " omem=")
				v, _, _ = strings.Cut(v, " ")
				n, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
				omem = max(omem, n)
			}
		}
		gone = pub.PubSubNumSub(ctx, "c").Val()["c"] == 0
	}
	// While it lagged, CLIENT LIST and INFO showed what it held.
	require.Positive(t, omem)
	require.Positive(t, recentMax)
	t.Logf("sent %d MB, heap %d MB before, peak %d MB", sent>>20, base>>20, peak>>20)
	require.True(t, gone, "subscriber still subscribed after %d MB", sent>>20)
	require.NotContains(t, pub.ClientList(ctx).Val(), "sub=1")
	// Disconnected near the limit: 32mb plus what the sockets hold.
	require.LessOrEqual(t, sent, 80<<20)
	require.Less(t, peak-base, int64(100<<20))
	// The subscriber sees its connection closed after what was sent.
	_ = w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, w.c)
	require.NoError(t, err)
}

// The soft limit: over it for longer than its seconds disconnects, with no
// hard limit at all.
func TestPubSubSoftOutputLimit(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "client-output-buffer-limit", "pubsub 0 256kb 1")
	w := dialWire(t, n.Addr)
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n", w.do("SUBSCRIBE", "c"))
	pub := n.Client(t)
	ctx := context.Background()
	msg := strings.Repeat("x", 1<<10)
	nodetest.Eventually(t, 30*time.Second, func() bool {
		p := pub.Pipeline()
		for i := 0; i < 64; i++ {
			p.Publish(ctx, "c", msg)
		}
		_, _ = p.Exec(ctx)
		return pub.PubSubNumSub(ctx, "c").Val()["c"] == 0
	}, "subscriber over the soft limit not disconnected")
}

// The normal class: a client that pipelines reads of a big value and never
// reads the replies is disconnected once they pass the hard limit.
func TestNormalOutputLimit(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	c := n.Client(t)
	require.NoError(t, c.ConfigSet(ctx, "client-output-buffer-limit", "normal 1mb 0 0").Err())
	require.NoError(t, c.Set(ctx, "big", strings.Repeat("v", 256<<10), 0).Err())
	w := dialWire(t, n.Addr)
	id := strings.TrimSuffix(strings.TrimPrefix(w.do("CLIENT", "ID"), ":"), "\r\n")
	var pipe strings.Builder
	for i := 0; i < 64; i++ {
		pipe.WriteString("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
	}
	nodetest.Eventually(t, 20*time.Second, func() bool {
		_ = w.c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := w.c.Write([]byte(pipe.String())); err != nil {
			return true // closed by the server
		}
		return !strings.Contains(c.ClientList(ctx).Val(), "id="+id+" ")
	}, "client over the normal hard limit not disconnected")
}
