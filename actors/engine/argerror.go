package engine

import (
	"strings"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// A node not in cluster mode answers CROSSSLOT for a command whose keys
// span slots, where Redis (one keyspace) would run it. Commands whose
// argument errors Redis reports before looking at any key declare them
// (command.Spec.ArgError), and the node answers that error instead: a
// numkeys one too many, which turns the next option word into a key of
// another slot, then gets Redis's syntax error.

// withArgError sets s.ArgError to the error parse replies, run on the
// arguments alone.
func WithArgError(s *command.Spec, parse func(c *Call) bool) *command.Spec {
	s.ArgError = func(args [][]byte) string {
		var w resp.Writer
		c := &Call{Args: args, W: &w}
		if parse(c) || len(w.B) == 0 || w.B[0] != '-' {
			return ""
		}
		return strings.TrimSuffix(string(w.B[1:]), "\r\n")
	}
	return s
}

// mpopArgErrors parses [B]LMPOP or [B]ZMPOP's arguments as their handlers
// do before touching keys: numkeys at idx and the rest (parse), then a
// blocking form's timeout (argument 1).
func MpopArgErrors(idx int, blocking bool, parse func(c *Call, idx int) bool) func(c *Call) bool {
	return func(c *Call) bool {
		ok := parse(c, idx)
		if ok && blocking {
			_, ok = c.ParseTimeout(c.Args[1])
		}
		return ok
	}
}
