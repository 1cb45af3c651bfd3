package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// writerLoad is the client side of the failover measurements: writers that
// each RPUSH increasing sequence numbers to their own list, through one
// go-redis ClusterClient, and remember which pushes were acknowledged and
// every pause between two acknowledgements. After the load stops, every
// acknowledged number must be in its list (none lost), and the longest
// pause of a writer is how long that client was blocked.
type writerLoad struct {
	cc   *redis.ClusterClient
	ws   []*writer
	stop atomic.Bool
	wg   sync.WaitGroup
}

// writer is one sequential client.
type writer struct {
	key   string
	shard string // id of the primary serving key when the load started
	mu    sync.Mutex
	acked []int64
	gaps  []gap // pauses between acknowledgements longer than gapMin
	last  time.Time
	errs  int
	err1  string // first error
}

// gap is a pause between two acknowledged writes of one writer.
type gap struct{ from, to time.Time }

func (g gap) d() time.Duration { return g.to.Sub(g.from) }

// gapMin: shorter pauses are ordinary latency, not recorded.
const gapMin = 2 * time.Millisecond

// writerClient is the ClusterClient of the measurements: it follows
// redirects at once and retries soon, and a refused dial fails at once
// (go-redis's default retries a dial five times with backoff, about a
// second in all, which a client with a stale slot map pays for every
// command to a node that just went away: the client's wait, not the
// servers').
func writerClient(addrs []string) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: 16, ReadTimeout: 2 * time.Second,
		WriteTimeout: time.Second, DialTimeout: 500 * time.Millisecond, MinRetryBackoff: time.Millisecond,
		MaxRetryBackoff: 10 * time.Millisecond, MaxRetries: 2, ClusterStateReloadInterval: time.Second,
		DialerRetries: 1})
}

// startWriters starts perShard writers on a slot of every primary of tp and
// waits until each has an acknowledged write.
func startWriters(t *testing.T, addrs []string, tp topology, perShard int) *writerLoad {
	t.Helper()
	wl := &writerLoad{cc: writerClient(addrs)}
	ids := make([]string, 0, len(tp.primaries))
	for id := range tp.primaries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := clientFor(tp.primaries[id])
		line := myselfLine(t, c)
		_ = c.Close()
		_, slot := keyOn(t, line)
		tag := tagFor(slot)
		for i := 0; i < perShard; i++ {
			wl.ws = append(wl.ws, &writer{key: fmt.Sprintf("{%s}:w%d", tag, len(wl.ws)), shard: id})
		}
	}
	for _, w := range wl.ws {
		wl.wg.Add(1)
		go wl.run(w)
	}
	t.Cleanup(func() {
		wl.stop.Store(true)
		wl.wg.Wait()
		_ = wl.cc.Close()
	})
	eventually(t, 10*time.Second, func() bool {
		for _, w := range wl.ws {
			w.mu.Lock()
			n := len(w.acked)
			w.mu.Unlock()
			if n == 0 {
				return false
			}
		}
		return true
	}, "every writer acknowledged")
	return wl
}

func (wl *writerLoad) run(w *writer) {
	defer wl.wg.Done()
	w.last = time.Now()
	for seq := int64(0); !wl.stop.Load(); seq++ {
		err := wl.cc.RPush(bg, w.key, seq).Err()
		now := time.Now()
		w.mu.Lock()
		if err != nil {
			w.errs++
			if w.err1 == "" {
				w.err1 = err.Error()
			}
		} else {
			w.acked = append(w.acked, seq)
			if now.Sub(w.last) > gapMin {
				w.gaps = append(w.gaps, gap{w.last, now})
			}
			w.last = now
		}
		w.mu.Unlock()
		if err != nil {
			time.Sleep(time.Millisecond)
		}
	}
}

// loadResult is what the writers saw.
type loadResult struct {
	acked, lost, errs int
	// blocked is the longest pause of a writer of the chosen shard that
	// overlaps the window; blockedAll the same over every writer.
	blocked, blockedAll time.Duration
	// baseline is the longest pause of any writer in the second before the
	// window (scheduling noise of the machine).
	baseline time.Duration
	firstErr string
	// long lists the pauses over 50 ms in the window (writer key, start
	// relative to the window and on the clock, to read beside the servers'
	// logs, and length).
	long []string
}

// finish stops the writers, checks their lists and measures the pauses
// that overlap [from, to] (shard "" measures every writer as the shard).
func (wl *writerLoad) finish(t *testing.T, shard string, from, to time.Time) loadResult {
	t.Helper()
	wl.stop.Store(true)
	wl.wg.Wait()
	var r loadResult
	for _, w := range wl.ws {
		r.errs += w.errs
		if r.firstErr == "" {
			r.firstErr = w.err1
		}
		for _, g := range w.gaps {
			if g.to.After(from) && g.from.Before(to) {
				r.blockedAll = max(r.blockedAll, g.d())
				if g.d() > 50*time.Millisecond {
					r.long = append(r.long, fmt.Sprintf("%s@+%v(%s):%v", w.key, g.from.Sub(from).Round(time.Millisecond),
						g.from.Format("15:04:05.000"), g.d().Round(time.Millisecond)))
				}
				if shard == "" || w.shard == shard {
					r.blocked = max(r.blocked, g.d())
				}
			} else if g.to.Before(from) && g.from.After(from.Add(-time.Second)) {
				r.baseline = max(r.baseline, g.d())
			}
		}
		var vals []string
		var err error
		for try := 0; try < 50; try++ {
			if vals, err = wl.cc.LRange(bg, w.key, 0, -1).Result(); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		require.NoError(t, err, "LRANGE %s", w.key)
		present := make(map[int64]bool, len(vals))
		for _, v := range vals {
			n, _ := strconv.ParseInt(v, 10, 64)
			present[n] = true
		}
		r.acked += len(w.acked)
		for _, seq := range w.acked {
			if !present[seq] {
				r.lost++
			}
		}
	}
	return r
}

// waitAgreement waits until every node of procs sees the same roles,
// primaries and configEpochs in CLUSTER NODES (a freshly created cluster
// may still be spreading who replicates whom).
func waitAgreement(t *testing.T, procs []*proc) {
	t.Helper()
	view := func(p *proc) string {
		c := p.client(2)
		defer c.Close()
		text, err := c.ClusterNodes(bg).Result()
		if err != nil {
			return "error: " + err.Error()
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
			f := strings.Fields(l)
			if len(f) < 8 {
				continue
			}
			role := "master"
			if strings.Contains(f[2], "slave") {
				role = "slave"
			}
			if strings.Contains(f[2], "fail") {
				role += ",fail"
			}
			lines = append(lines, f[0]+" "+role+" "+f[3]+" "+f[6]+" "+strings.Join(f[8:], " "))
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	eventually(t, 20*time.Second, func() bool {
		first := view(procs[0])
		for _, p := range procs[1:] {
			if view(p) != first {
				return false
			}
		}
		return true
	}, "every node agrees on the topology")
}

// durStats formats the median and max of ds.
func durStats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	all := make([]string, len(s))
	for i, d := range s {
		all[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return fmt.Sprintf("median %v max %v (ms: %s)", s[len(s)/2].Round(time.Millisecond),
		s[len(s)-1].Round(time.Millisecond), strings.Join(all, " "))
}
