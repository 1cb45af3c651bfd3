package engine

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/resp"
)

// parseInt is Redis's strict integer parsing (string2ll).
func ParseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// ofKind passes a looked-up entry through when it is missing (nil) or of
// kind; otherwise it replies WRONGTYPE and returns false.
func (c *Call) OfKind(e *keyspace.Entry, kind keyspace.Kind) (*keyspace.Entry, bool) {
	if e != nil && e.Kind != kind {
		c.W.Error(ErrWrongType)
		return e, false
	}
	return e, true
}

// removeMembers is SREM / ZREM / HDEL on an existing key: del removes each
// of arguments 2.. (true when it was there), the key goes when size drops
// to 0, and the reply is the number removed (none: no change). A removal
// fires event (of class), then 'del' when the key went.
func (c *Call) RemoveMembers(key []byte, class int64, event string, del func([]byte) bool, size func() int) {
	var n int64
	deleted := false
	for _, m := range c.Args[2:] {
		if del(m) {
			n++
			if size() == 0 {
				c.Delete(key)
				deleted = true
				break
			}
		}
	}
	if n == 0 {
		c.Unchanged()
	} else {
		c.Notify(class, event, key)
		if deleted {
			c.Notify(NotifyGeneric, "del", key)
		}
	}
	c.W.Int(n)
}
