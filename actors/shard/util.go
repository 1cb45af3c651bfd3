package shard

import "github.com/slotd/slotd/netio/resp"

// parseInt is Redis's strict integer parsing (string2ll).
func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }
