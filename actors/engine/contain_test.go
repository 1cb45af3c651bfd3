package engine_test

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/enginetest"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// Test-only commands that panic, registered by this test binary only (no
// build of slotd has them):
//   - PANICAPPEND key value: appends value to the string at key (creating
//     it) without replying, then panics: a write that panicked half-way.
//   - PANICBLOCK key: blocks on key; when re-run (a push woke it) it
//     panics.
var registerPanicCmds sync.Once

func panicCmds() {
	enginetest.Register()
	registerPanicCmds.Do(func() {
		command.Register(
			engine.Handle(&command.Spec{Name: "panicappend", Arity: 3, Flags: []string{"write"}, First: 1, Last: 1,
				Step: 1, Exec: command.Shard}, func(c *engine.Call) {
				e := c.LookupWrite(c.Args[1])
				if e == nil {
					e = c.Create(c.Args[1], keyspace.KindString)
				}
				e.Str = append(e.Str, c.Args[2]...)
				c.W.Int(99) // a partial reply the client must not see
				panic("panicappend: half-way")
			}),
			engine.Handle(&command.Spec{Name: "panicblock", Arity: 2, Flags: []string{"write", "blocking"}, First: 1,
				Last: 1, Step: 1, Exec: command.Shard}, func(c *engine.Call) {
				if c.Rerunning() {
					panic("panicblock: re-run")
				}
				c.Block([][]byte{c.Args[1]}, 0, func(c *engine.Call) { c.W.Null() })
			}),
		)
	})
}

// aofSink collects the records a shard hands its AOF.
type aofSink struct{ recs []byte }

func (a *aofSink) Append(recs []byte)  { a.recs = append(a.recs, recs...) }
func (a *aofSink) Always() bool        { return false }
func (a *aofSink) AfterSync(fn func()) { fn() }
func (a *aofSink) commands() [][]string {
	var out [][]string
	for rest := a.recs; len(rest) > 0; {
		_, _, payload, r, ok := engine.NextRecord(rest)
		if !ok {
			break
		}
		rest = r
		args, _ := engine.SplitCommand(payload, nil)
		cmd := make([]string, len(args))
		for i, x := range args {
			cmd[i] = string(x)
		}
		out = append(out, cmd)
	}
	return out
}

type doneBatches []*batch.Batch

func (d *doneBatches) BatchDone(b *batch.Batch) { *d = append(*d, b) }

// containShard is a shard (every slot) with an AOF collecting its stream.
func containShard(t *testing.T) (*engine.Shard, *aofSink) {
	t.Helper()
	panicCmds()
	var us int64 = 1_700_000_000_000_000
	s := engine.NewShard(rand.New(rand.NewPCG(1, 2)), func() int64 { return us }, benchHost{})
	s.Group().CmdStats = command.NewStats()
	aof := &aofSink{}
	s.AttachAOF(aof)
	return s, aof
}

// runBatch runs cmds as one batch and returns each command's reply.
func runBatch(t *testing.T, s *engine.Shard, cmds ...[]string) []string {
	t.Helper()
	var done doneBatches
	b := batch.NewBatch()
	for _, c := range cmds {
		args := make([][]byte, len(c))
		for i, a := range c {
			args[i] = []byte(a)
		}
		slot := -1
		if len(c) > 1 {
			slot = slots.HashSlot(args[1])
		}
		b.Add(command.Lookup(args[0]), args, slot, 2, false)
	}
	b.Seal()
	b.Done = &done
	s.Run(b, 1_700_000_000_000)
	s.EndTurn()
	require.Len(t, done, 1, "the batch is complete")
	return splitReplies(b)
}

func splitReplies(b *batch.Batch) []string {
	out := make([]string, len(b.Ends))
	start := 0
	for i, end := range b.Ends {
		out[i] = string(b.Out.B[start:end])
		start = end
	}
	return out
}

// replay runs cmds (a shard's stream) in a fresh engine, as a replica or
// an AOF load does, and returns a client of it.
func replay(t *testing.T, cmds [][]string) *enginetest.Client {
	t.Helper()
	c := enginetest.New(enginetest.Options{Seed: 1}).Client(2)
	for _, cmd := range cmds {
		r := c.Do(cmd...)
		require.False(t, strings.HasPrefix(r, "-"), "replaying %q: %s", cmd, r)
	}
	return c
}

func TestPanicInHandlerContained(t *testing.T) {
	s, aof := containShard(t)
	replies := runBatch(t, s,
		[]string{"SET", "k", "a"},
		[]string{"PANICAPPEND", "k", "b"},
		[]string{"GET", "k"},
		[]string{"SET", "other", "1"},
		[]string{"PANICAPPEND", "fresh", "x"},
	)
	require.Equal(t, []string{
		"+OK\r\n",
		"-ERR internal error executing 'panicappend'\r\n",
		"$2\r\nab\r\n", // what the handler left: the rest of the batch ran after it
		"+OK\r\n",
		"-ERR internal error executing 'panicappend'\r\n",
	}, replies)
	require.EqualValues(t, 2, s.Stats.Panics.Load())
	require.EqualValues(t, 2, s.Group().Panics())

	// The stream (replicas, AOF) says what memory holds: replayed, it
	// gives the same values.
	r := replay(t, aof.commands())
	require.Equal(t, "$2\r\nab\r\n", r.Do("GET", "k"))
	require.Equal(t, "$1\r\nx\r\n", r.Do("GET", "fresh"))
	require.Equal(t, "$1\r\n1\r\n", r.Do("GET", "other"))

	// The shard goes on serving.
	require.Equal(t, []string{"$1\r\nx\r\n", ":2\r\n"}, runBatch(t, s, []string{"GET", "fresh"}, []string{"APPEND", "fresh", "y"}))
}

func TestPanicInTransactionKeepsStreamAtomic(t *testing.T) {
	s, aof := containShard(t)
	b := batch.NewBatch()
	add := func(c ...string) {
		args := make([][]byte, len(c))
		for i, a := range c {
			args[i] = []byte(a)
		}
		b.Add(command.Lookup(args[0]), args, slots.HashSlot([]byte("{t}")), 2, false)
	}
	b.Add(nil, nil, slots.HashSlot([]byte("{t}")), 2, false) // EXEC's marker, as netio/multi.go adds it
	add("SET", "{t}a", "1")
	add("PANICAPPEND", "{t}a", "2")
	add("SET", "{t}b", "3")
	b.Cmds[0].TxBegin = 3
	for i := 1; i < 4; i++ {
		b.Cmds[i].NoBlock = true
	}
	b.Seal()
	var done doneBatches
	b.Done = &done
	s.Run(b, 1_700_000_000_000)
	s.EndTurn()
	require.Len(t, done, 1)
	require.Equal(t, []string{"", "+OK\r\n", "-ERR internal error executing 'panicappend'\r\n", "+OK\r\n"},
		splitReplies(b))
	cmds := aof.commands()
	var names []string
	for _, c := range cmds {
		names = append(names, c[0])
	}
	// One MULTI/EXEC around the transaction, the restatement inside it.
	require.Equal(t, []string{"MULTI", "SET", "DEL", "SET", "SET", "EXEC"}, names)
	r := replay(t, cmds)
	require.Equal(t, "$2\r\n12\r\n", r.Do("GET", "{t}a"))
	require.Equal(t, "$1\r\n3\r\n", r.Do("GET", "{t}b"))
}

func TestPanicInBlockedRerunContained(t *testing.T) {
	s, _ := containShard(t)
	var done doneBatches
	blocked := batch.NewBatch()
	blocked.Add(command.Lookup([]byte("panicblock")), [][]byte{[]byte("PANICBLOCK"), []byte("q")},
		slots.HashSlot([]byte("q")), 2, false)
	blocked.Seal()
	blocked.Done = &done
	s.Run(blocked, 1_700_000_000_000)
	s.EndTurn()
	require.Empty(t, done, "parked")
	// A push to q wakes it; its re-run panics: it gets the error, the
	// pushing client its reply.
	require.Equal(t, []string{":1\r\n", "$1\r\nv\r\n"}, runBatch(t, s, []string{"RPUSH", "q", "v"}, []string{"LINDEX", "q", "0"}))
	require.Len(t, done, 1)
	require.Equal(t, []string{"-ERR internal error executing 'panicblock'\r\n"}, splitReplies(blocked))
	require.EqualValues(t, 1, s.Stats.Panics.Load())
}
