package aof_test

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/aof"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// faultyFile is an incr file whose write or fsync fails while the test
// says so.
type faultyFile struct {
	*os.File
	failWrite, failSync *atomic.Bool
}

func (f faultyFile) Write(p []byte) (int, error) {
	if f.failWrite.Load() {
		return 0, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f faultyFile) Sync() error {
	if f.failSync.Load() {
		return syscall.EIO
	}
	return f.File.Sync()
}

// faultyNode starts a node whose AOF (turned on at run time) writes
// faulty files, and whose fatal errors are sent to the returned channel
// instead of ending the test process.
func faultyNode(t *testing.T, policy string) (n *nodetest.Node, failWrite, failSync *atomic.Bool, died chan string) {
	n = nodetest.Start(t, "shard-actors", "1", "appendfsync", policy)
	failWrite, failSync, died = new(atomic.Bool), new(atomic.Bool), make(chan string, 8)
	n.AOF.SetFileOpener(func(path string, flag int, perm os.FileMode) (aof.File, error) {
		f, err := os.OpenFile(path, flag, perm)
		if err != nil {
			return nil, err
		}
		return faultyFile{File: f, failWrite: failWrite, failSync: failSync}, nil
	})
	n.AOF.SetFatal(func(msg string) { died <- msg })
	c := n.Client(t)
	require.NoError(t, c.ConfigSet(ctx, "appendonly", "yes").Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, c, "aof_rewrite_in_progress") == "0" && info(t, c, "aof_rewrites") == "1"
	}, "the first rewrite ends")
	return n, failWrite, failSync, died
}

// expectDeath waits for the node's fatal error and checks that the write
// waiting for the failed fsync got no reply: another client is served
// meanwhile, and the write's reply still has not come.
func expectDeath(t *testing.T, n *nodetest.Node, died chan string, reply chan error, want string) {
	t.Helper()
	select {
	case msg := <-died:
		assert.Equal(t, want, msg)
	case <-time.After(10 * time.Second):
		t.Fatal("the AOF error was not fatal")
	}
	// ECHO is answered by the event loop (a read's reply waits for the
	// fsync under always, as in Redis).
	require.NoError(t, n.Client(t).Echo(ctx, "x").Err(), "the node answers until the process exits")
	select {
	case err := <-reply:
		t.Fatalf("a write was acknowledged without its fsync: %v", err)
	default:
	}
}

// Under appendfsync always a write or fsync error is fatal, as in Redis:
// the write waiting for that fsync is never acknowledged.
func TestAOFErrorUnderAlwaysAcknowledgesNothing(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"fsync", "Can't persist AOF for fsync error when the AOF fsync policy is 'always': Input/output error. Exiting..."},
		{"write", "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, failWrite, failSync, died := faultyNode(t, "always")
			c := n.Client(t)
			require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
			if tc.name == "fsync" {
				failSync.Store(true)
			} else {
				failWrite.Store(true)
			}
			reply := make(chan error, 1)
			go func() { reply <- c.Set(ctx, "b", "2", 0).Err() }()
			expectDeath(t, n, died, reply, tc.want)
		})
	}
}

// Under appendfsync everysec an fsync error refuses writes with MISCONF
// until an fsync succeeds again; the node lives.
func TestFsyncFailureUnderEverysecRefusesWrites(t *testing.T) {
	n, _, failSync, died := faultyNode(t, "everysec")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	failSync.Store(true)
	misconf := "MISCONF Errors writing to the AOF file: Input/output error"
	nodetest.Eventually(t, 10*time.Second, func() bool {
		err := c.Set(ctx, "b", "2", 0).Err()
		return err != nil && err.Error() == misconf
	}, "writes are refused once the background fsync fails")
	assert.Equal(t, "err", info(t, c, "aof_last_write_status"))
	failSync.Store(false)
	nodetest.Eventually(t, 10*time.Second, func() bool { return c.Set(ctx, "c", "3", 0).Err() == nil },
		"writes are taken again once an fsync succeeds")
	assert.Equal(t, "ok", info(t, c, "aof_last_write_status"))
	assert.Empty(t, died, "everysec errors are not fatal")
}
