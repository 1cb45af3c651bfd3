package engine

import (
	"sync/atomic"

	"github.com/slotd/slotd/netio/config"
)

// Keyspace notifications (notify-keyspace-events). A command records the
// events Redis fires for it (notifyKeyspaceEvent) as effects of its step:
// the shard appends them to its event buffer, in the order the command
// fires them, and hands the buffer to Notifier when the batch is finished
// (before its replies go out, as Redis publishes while the command runs)
// and at the end of every actor turn (active expiry, timers). Delivery is
// the event loops' business (netio publishes on the local pub/sub only,
// as Redis does in cluster mode too). With notify-keyspace-events "" a
// notification costs one atomic load and nothing is recorded.

// Event classes, the flags of notify-keyspace-events.
const (
	NotifyGeneric = config.NotifyGeneric
	NotifyString  = config.NotifyString
	NotifyList    = config.NotifyList
	NotifySet     = config.NotifySet
	NotifyHash    = config.NotifyHash
	NotifyZSet    = config.NotifyZSet
	NotifyExpired = config.NotifyExpired
	NotifyEvicted = config.NotifyEvicted
	NotifyStream  = config.NotifyStream
	NotifyKeyMiss = config.NotifyKeyMiss
	NotifyNew     = config.NotifyNew

	notifyChannels = config.NotifyKeyspace | config.NotifyKeyevent
)

// Notifier delivers keyspace events (implemented by netio); called on the
// shard's goroutine, it must not block. keyspace and keyevent say which of
// the two channels (__keyspace@db__:key, __keyevent@db__:event) the event
// goes to.
type Notifier interface {
	KeyspaceEvent(db int, event string, key []byte, keyspace, keyevent bool)
}

// Notifications is the node-wide part kept in the shard group.
type Notifications struct {
	// Flags mirrors notify-keyspace-events (config.Notify* bits).
	Flags atomic.Int64
	// Notifier receives the events; nil: none are recorded.
	Notifier Notifier
}

// note is one recorded event; its key is in the shard's noteKeys.
type note struct {
	db         int
	event      string
	start, end int
	space, ev  bool
}

// Notify records event for key in the command's database when its class
// is enabled (Redis's notifyKeyspaceEvent).
func (c *Call) Notify(class int64, event string, key []byte) { c.S.notify(class, event, key) }

func (s *Shard) notify(class int64, event string, key []byte) {
	n := &s.group.Notify
	f := n.Flags.Load()
	if f&class == 0 || f&notifyChannels == 0 || n.Notifier == nil {
		return
	}
	at := len(s.noteKeys)
	s.noteKeys = append(s.noteKeys, key...)
	s.notes = append(s.notes, note{db: s.db, event: event, start: at, end: len(s.noteKeys),
		space: f&config.NotifyKeyspace != 0, ev: f&config.NotifyKeyevent != 0})
}

// flushNotes hands the recorded events to the Notifier, in order.
func (s *Shard) flushNotes() {
	if len(s.notes) == 0 {
		return
	}
	n := s.group.Notify.Notifier
	for _, e := range s.notes {
		n.KeyspaceEvent(e.db, e.event, s.noteKeys[e.start:e.end:e.end], e.space, e.ev)
	}
	s.notes = s.notes[:0]
	if cap(s.noteKeys) > 64<<10 {
		s.noteKeys = nil
	} else {
		s.noteKeys = s.noteKeys[:0]
	}
}
