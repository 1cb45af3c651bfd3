package shard

import (
	"github.com/slotd/slotd/actors/keyspace"
	"github.com/slotd/slotd/netio/resp"
)

// parseInt is Redis's strict integer parsing (string2ll).
func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// ofKind passes a looked-up entry through when it is missing (nil) or of
// kind; otherwise it replies WRONGTYPE and returns false.
func (c *Call) ofKind(e *keyspace.Entry, kind keyspace.Kind) (*keyspace.Entry, bool) {
	if e != nil && e.Kind != kind {
		c.W.Error(ErrWrongType)
		return e, false
	}
	return e, true
}
