package engine_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/enginetest"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// benchHost is a Host for batches that never block, migrate or script.
type benchHost struct{}

func (benchHost) After(time.Duration, *engine.Blocked) func() { return func() {} }
func (benchHost) Migrate(*engine.MigrateJob, bool) bool       { return false }
func (benchHost) ScriptBegin(uint64, *engine.RunningFunction) context.Context {
	return context.Background()
}
func (benchHost) ScriptEnd()         {}
func (benchHost) ScriptWrites() bool { return true }

type doneCount int

func (d *doneCount) BatchDone(*batch.Batch) { *d++ }

// BenchmarkBatchExec runs batches of 16 commands (8 SET, 8 GET, as
// redis-benchmark -t get,set -P 16 sends them) through Shard.Run with
// command statistics on, as a node runs them. It exists for instruction
// counts of the exec path (valgrind --tool=callgrind on the test binary
// with a fixed -test.benchtime=Nx), not for timings.
func BenchmarkBatchExec(b *testing.B) {
	enginetest.Register()
	var us int64 = 1_700_000_000_000_000
	s := engine.NewShard(rand.New(rand.NewPCG(1, 2)), func() int64 { return us }, benchHost{})
	s.Group().CmdStats = command.NewStats()
	var done doneCount
	get, set := command.Lookup([]byte("get")), command.Lookup([]byte("set"))
	keys := make([][]byte, 16)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	val := []byte("xxx")
	bt := batch.NewBatch()
	for i := 0; i < 16; i++ {
		k := keys[i%8]
		if i < 8 {
			bt.Add(set, [][]byte{[]byte("SET"), k, val}, slots.HashSlot(k), 2, false)
		} else {
			bt.Add(get, [][]byte{[]byte("GET"), k}, slots.HashSlot(k), 2, false)
		}
	}
	bt.Seal()
	bt.Done = &done
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt.Out.B = bt.Out.B[:0]
		bt.Ends = bt.Ends[:0]
		s.Run(bt, us/1000)
		s.EndTurn()
	}
	if int(done) != b.N {
		b.Fatalf("%d batches done, want %d", done, b.N)
	}
}
