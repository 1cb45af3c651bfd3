package cluster

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// failingSaver stands for nodes.conf: saves succeed until fail is set.
type failingSaver struct{ fail atomic.Bool }

func (f *failingSaver) err() error {
	if f.fail.Load() {
		return syscall.ENOSPC
	}
	return nil
}
func (f *failingSaver) save(string) error       { return f.err() }
func (f *failingSaver) saveNoSync(string) error { return f.err() }
func (f *failingSaver) sync() error             { return f.err() }

// A nodes.conf save that fails stops the node, as Redis's
// clusterSaveConfigOrDie exits: the command that needed it gets no reply
// (no epoch acknowledged that is not on disk), and the slot it claimed is
// not routed.
func TestFailedConfigSaveIsFatal(t *testing.T) {
	for _, args := range [][]string{{"cluster", "bumpepoch"}, {"cluster", "addslots", "7"}} {
		t.Run(args[1], func(t *testing.T) {
			cfg := config.New()
			require.NoError(t, cfg.LoadArgs([]string{"--cluster-enabled", "yes", "--dir", t.TempDir(), "--port", "7000"}))
			sv := &failingSaver{}
			died := make(chan string, 4)
			table := new(slots.Holder)
			c, err := Start(Options{Config: cfg, Log: zerolog.Nop(), System: actor.NewActorSystem(), Table: table,
				saver: sv, Fatal: func(msg string) { died <- msg }})
			require.NoError(t, err)
			t.Cleanup(c.Stop)

			sv.fail.Store(true)
			var replied atomic.Bool
			bargs := make([][]byte, len(args))
			for i, a := range args {
				bargs[i] = []byte(a)
			}
			w := &resp.Writer{Proto: 2}
			c.Submit(bargs, w, func() { replied.Store(true) })
			select {
			case msg := <-died:
				assert.Equal(t, "Fatal: can't update cluster config file.", msg)
			case <-time.After(10 * time.Second):
				t.Fatal("the failed save was not fatal")
			}
			assert.False(t, replied.Load(), "no reply for a change that is not on disk")
			assert.Equal(t, int16(slots.NoOwner), table.Load().Owner[7], "slot 7 is not routed here")

		})
	}
}
