package aof_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// fakeLog is an AOF in always mode whose fsync the test completes.
type fakeLog struct {
	mu       sync.Mutex
	appended []string
	waiting  chan func()
}

func (f *fakeLog) Append(recs []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(recs) > 0 {
		_, _, payload, rest, ok := engine.NextRecord(recs)
		if !ok {
			break
		}
		f.appended = append(f.appended, string(payload))
		recs = rest
	}
}

func (f *fakeLog) Always() bool        { return true }
func (f *fakeLog) AfterSync(fn func()) { f.waiting <- fn }

// Under appendfsync always a write's reply leaves only after the fsync
// that covers its record (the record is written first).
func TestAlwaysHoldsRepliesUntilSynced(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "1")
	c := n.Client(t)
	require.NoError(t, c.Ping(ctx).Err())
	g := n.Shards
	f := &fakeLog{waiting: make(chan func(), 16)}
	done := make(chan struct{})
	g.AttachAOF(0, f, func() { close(done) })
	<-done
	t.Cleanup(func() { g.DetachAOF(0, nil) })

	reply := make(chan error, 1)
	go func() { reply <- c.Set(ctx, "k", "v", 0).Err() }()
	var release func()
	select {
	case release = <-f.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the batch was never handed to AfterSync")
	}
	f.mu.Lock()
	assert.Equal(t, []string{"*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n"}, f.appended, "written before the reply is held")
	f.mu.Unlock()
	select {
	case err := <-reply:
		t.Fatalf("the reply left before the fsync: %v", err)
	default:
	}
	release()
	require.NoError(t, <-reply)
}
