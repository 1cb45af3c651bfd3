package cmdtest_test

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConsumerGroupWorkersExactlyOnce runs four consumer-group workers
// over 100 000 entries: two go-redis goroutines and two redis-py
// processes (skipped without python3-redis). One of each crashes after a
// few batches with entries read but not acknowledged; the survivors take
// those over with XAUTOCLAIM. Every entry must be acknowledged exactly
// once (XACK returned 1 for exactly one worker), and nothing stays
// pending.
func TestConsumerGroupWorkersExactlyOnce(t *testing.T) {
	const total = 100000
	n := shardsNode(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: n.Addr})
	defer c.Close()
	const stream, group = "{w}jobs", "workers"
	require.NoError(t, c.XGroupCreateMkStream(ctx, stream, group, "0").Err())

	var mu sync.Mutex
	acked := map[string]int{}
	record := func(ids ...string) {
		mu.Lock()
		for _, id := range ids {
			acked[id]++
		}
		mu.Unlock()
	}
	goWorker := func(name string, crashAfter int) {
		w := redis.NewClient(&redis.Options{Addr: n.Addr})
		defer w.Close()
		process := func(msgs []redis.XMessage) {
			for _, m := range msgs {
				if k, err := w.XAck(ctx, stream, group, m.ID).Result(); err == nil && k == 1 {
					record(m.ID)
				}
			}
		}
		empty := 0
		for batch := 1; ; batch++ {
			res, err := w.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: name,
				Streams: []string{stream, ">"}, Count: 50, Block: 100 * time.Millisecond}).Result()
			if err != nil && err != redis.Nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			if crashAfter > 0 && batch == crashAfter {
				return // crash: what it just read stays pending
			}
			var msgs []redis.XMessage
			if len(res) > 0 {
				msgs = res[0].Messages
			}
			process(msgs)
			if batch%5 == 0 {
				for cursor := "0-0"; ; {
					claimed, next, err := w.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: stream, Group: group,
						Consumer: name, MinIdle: time.Second, Start: cursor, Count: 100}).Result()
					require.NoError(t, err)
					process(claimed)
					if cursor = next; cursor == "0-0" {
						break
					}
				}
			}
			if len(msgs) > 0 {
				empty = 0
				continue
			}
			if empty++; empty >= 2 && w.Get(ctx, stream+":done").Val() == "1" &&
				w.XPending(ctx, stream, group).Val().Count == 0 {
				return
			}
		}
	}
	var wg sync.WaitGroup
	for i, crash := range []int{0, 7} {
		wg.Add(1)
		go func() { defer wg.Done(); goWorker(fmt.Sprintf("go-%d", i), crash) }()
	}
	// Debian's python3-redis is for the system interpreter, which may not
	// be the first python3 on PATH.
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import redis").Run() == nil {
			python = p
			break
		}
	}
	if python != "" {
		for i, crash := range []int{0, 9} {
			cmd := exec.Command(python, "testdata/stream_worker.py", strings.TrimPrefix(n.Addr, "127.0.0.1:"),
				stream, group, fmt.Sprintf("py-%d", i), strconv.Itoa(crash))
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc := bufio.NewScanner(out)
				k := 0
				for sc.Scan() {
					record(sc.Text())
					k++
				}
				t.Logf("redis-py worker %d acknowledged %d entries", i, k)
				assert.NoError(t, cmd.Wait(), "redis-py worker %d", i)
			}()
		}
	} else {
		t.Log("python3-redis not installed: go-redis workers only")
	}
	// The producer: pipelined XADDs while the workers read.
	for i := 0; i < total; i += 1000 {
		p := c.Pipeline()
		for j := i; j < i+1000; j++ {
			p.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"job", j}})
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, c.Set(ctx, stream+":done", "1", 0).Err())
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("workers did not finish")
	}
	assert.Equal(t, int64(total), c.XLen(ctx, stream).Val())
	assert.Equal(t, int64(0), c.XPending(ctx, stream, group).Val().Count)
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, acked, total, "every entry acknowledged")
	for id, k := range acked {
		if k != 1 {
			t.Errorf("%s acknowledged %d times", id, k)
		}
	}
}
