package netio

import (
	"context"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// CLIENT REPLY ON|OFF|SKIP and CLIENT UNBLOCK, as Redis 7.0.

func registerCmdClientReply() {
	command.AddSubcommand("client", "reply", Loop(&command.Spec{Arity: 3, Flags: []string{"noscript", "loading", "stale"},
		Categories: []string{"slow", "connection"}, Group: "connection", Since: "3.2.0",
		Summary: "Instruct the server whether to reply to commands"}, clientReply))
	command.AddSubcommand("client", "unblock", Loop(&command.Spec{Arity: -3,
		Flags: []string{"admin", "noscript", "loading", "stale"}, Categories: []string{"admin", "slow", "dangerous", "connection"},
		Group: "connection", Since: "5.0.0", Summary: "Unblock a client blocked in a blocking command from a different connection"},
		clientUnblock))
}

// replyState is a connection's CLIENT REPLY mode. Replies are dropped when
// the group is written (every reply of the command: errors, a blocked
// command's eventual reply), as Redis drops them before they reach the
// output buffer; pushes to a subscriber are still delivered.
type replyState struct {
	off      bool // CLIENT REPLY OFF
	skip     bool // the command being dispatched follows CLIENT REPLY SKIP
	skipNext bool // set by CLIENT REPLY SKIP: the next command is skipped
}

func (r *replyState) active() bool { return r.off || r.skip || r.skipNext }

// mute drops the replies of the order entries the command added (from n0)
// when the mode, as the command left it, says so: CLIENT REPLY ON's own +OK
// is written.
func (r *replyState) mute(g *group, n0 int) {
	if r.off || r.skip {
		for i := n0; i < len(g.order); i++ {
			g.order[i].mute = true
			g.muted = true
		}
	}
	r.skip = false
}

func clientReply(x *Ctx) {
	r := &x.C.replies
	switch a := x.Args[2]; {
	case ArgIs(a, "on"):
		*r = replyState{}
		x.W.OK()
	case ArgIs(a, "off"):
		r.off = true
	case ArgIs(a, "skip"):
		if !r.off {
			r.skipNext = true
		}
	default:
		x.W.Error("ERR syntax error")
	}
}

// clientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client waiting in a
// blocking command of a shard actor gets that command's timeout reply, or
// the UNBLOCKED error; 1 if it was blocked, else 0.
func clientUnblock(x *Ctx) {
	withError := false
	if len(x.Args) > 4 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + Trunc(string(x.Args[1]), 128) +
			"'. Try CLIENT HELP.")
		return
	}
	if len(x.Args) == 4 {
		switch a := x.Args[3]; {
		case ArgIs(a, "timeout"):
		case ArgIs(a, "error"):
			withError = true
		default:
			x.W.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.W.Error("ERR value is not an integer or out of range")
		return
	}
	target := x.S.clientByID(id)
	if target == nil || target == x.C || !target.hasFlag(clientFlagBlocked) {
		x.W.Int(0)
		return
	}
	s := x.S
	x.Defer(func(d *Deferred) {
		answer := func(ok bool) {
			if ok {
				d.W.Int(1)
			} else {
				d.W.Int(0)
			}
			d.Done()
		}
		// The target's blocking state belongs to its event loop.
		err := target.loop.Execute(context.Background(), runFunc(func() {
			if target.closed || target.blockedBatch == nil {
				answer(false)
				return
			}
			s.shards.Unblock(target.blockedShard, target.blockedBatch, withError, answer)
		}))
		if err != nil {
			answer(false)
		}
	})
}
