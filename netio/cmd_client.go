package netio

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// CLIENT and its subcommands. Other files may add subcommands (TRACKING,
// CACHING, PAUSE ...) with command.AddSubcommand("client", ...); CLIENT HELP
// lists what is registered.
func registerCmdClient() {
	rw := []string{"noscript", "loading", "stale"}
	adm := []string{"admin", "noscript", "loading", "stale"}
	conn := []string{"slow", "connection"}
	admCats := []string{"admin", "slow", "dangerous", "connection"}
	sub := func(arity int, flags, cats []string, since, summary string, h func(*Ctx), tips ...string) *command.Spec {
		return Loop(&command.Spec{Arity: arity, Flags: flags, Categories: cats, Group: "connection", Since: since,
			Summary: summary, Tips: tips}, h)
	}
	command.Register(&command.Spec{Name: "client", Arity: -2, Categories: []string{"slow"}, Group: "connection",
		Since: "2.4.0", Summary: "A container for client connection commands",
		Subcommands: map[string]*command.Spec{
			"id":      sub(2, rw, conn, "5.0.0", "Returns the client ID for the current connection", clientID),
			"getname": sub(2, rw, conn, "2.6.9", "Get the current connection name", clientGetName),
			"setname": sub(3, rw, conn, "2.6.9", "Set the current connection name", clientSetName),
			"setinfo": sub(4, rw, conn, "7.2.0", "Set client or connection specific info", clientSetInfo),
			"info": sub(2, rw, conn, "6.2.0", "Returns information about the current client connection.", clientInfo,
				"nondeterministic_output"),
			"list": sub(-2, adm, admCats, "2.4.0", "Get the list of client connections", clientList,
				"nondeterministic_output"),
			"kill":     sub(-3, adm, admCats, "2.4.0", "Kill the connection of a client", clientKill),
			"no-evict": sub(3, adm, admCats, "7.0.0", "Set client eviction mode for the current connection", clientNoEvict),
			"no-touch": sub(3, rw, []string{"slow", "connection"}, "7.2.0",
				"Controls whether commands sent by the client will alter the LRU/LFU of the keys they access.", clientNoTouch),
			"help": sub(2, []string{"loading", "stale"}, conn, "5.0.0", "Show helpful text about the different subcommands", clientHelp),
		}})
}

// Bits of client.flags, readable from any goroutine. Packages that own the
// corresponding state (MULTI, pub/sub, tracking, replication) set them with
// setFlag so CLIENT LIST/KILL see it.
const (
	clientFlagResp3 uint32 = 1 << iota
	clientFlagReadonly
	clientFlagPubSub
	clientFlagMulti
	clientFlagBlocked
	clientFlagTracking
	clientFlagReplica
	clientFlagMaster
)

func (cl *client) setFlag(f uint32, on bool) {
	if on {
		cl.flags.Or(f)
	} else {
		cl.flags.And(^f)
	}
}

func (cl *client) hasFlag(f uint32) bool { return cl.flags.Load()&f != 0 }

func clientID(x *Ctx) { x.W.Int(x.C.id) }

func clientGetName(x *Ctx) {
	if n := x.C.name.Load(); n != nil {
		x.W.BulkString(*n)
		return
	}
	x.W.Null()
}

func clientSetName(x *Ctx) {
	if !validName(x.Args[2]) {
		x.W.Error(errBadName)
		return
	}
	x.C.setName(x.Args[2])
	x.W.OK()
}

// clientSetInfo implements CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2;
// clients send it on connect and ignore errors, but go-redis and rueidis
// are happier when it succeeds).
func clientSetInfo(x *Ctx) {
	attr, val := x.Args[2], x.Args[3]
	var dst = &x.C.libName
	switch {
	case ArgIs(attr, "lib-name"):
	case ArgIs(attr, "lib-ver"):
		dst = &x.C.libVer
	default:
		x.W.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validName(val) {
		x.W.Error("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
		return
	}
	if len(val) == 0 {
		dst.Store(nil)
	} else {
		v := string(val)
		dst.Store(&v)
	}
	x.W.OK()
}

func clientInfo(x *Ctx) {
	b := x.C.appendInfo(nil, time.Now().UnixMilli())
	b = append(b, '\n')
	x.W.Verbatim(string(b))
}

func onOff(x *Ctx, set func(bool)) {
	switch {
	case ArgIs(x.Args[2], "on"):
		set(true)
	case ArgIs(x.Args[2], "off"):
		set(false)
	default:
		x.W.Error("ERR syntax error")
		return
	}
	x.W.OK()
}

func clientNoEvict(x *Ctx) { onOff(x, x.C.noEvict.Store) }
func clientNoTouch(x *Ctx) { onOff(x, x.C.noTouch.Store) }

// Client types of CLIENT LIST/KILL TYPE.
const (
	clientTypeNone = iota - 1
	clientTypeNormal
	clientTypeReplica
	clientTypePubSub
	clientTypeMaster
)

func parseClientType(b []byte) int {
	switch {
	case ArgIs(b, "normal"):
		return clientTypeNormal
	case ArgIs(b, "slave"), ArgIs(b, "replica"):
		return clientTypeReplica
	case ArgIs(b, "pubsub"):
		return clientTypePubSub
	case ArgIs(b, "master"):
		return clientTypeMaster
	}
	return clientTypeNone
}

// typ is the client's class as CLIENT LIST/KILL TYPE see it.
func (cl *client) typ() int {
	f := cl.flags.Load()
	switch {
	case f&clientFlagMaster != 0:
		return clientTypeMaster
	case f&clientFlagReplica != 0:
		return clientTypeReplica
	case f&clientFlagPubSub != 0:
		return clientTypePubSub
	}
	return clientTypeNormal
}

// clientsSnapshot returns the connected clients ordered by id.
func (s *Server) clientsSnapshot() []*client {
	s.clientMu.Lock()
	out := make([]*client, 0, len(s.clients))
	for _, cl := range s.clients {
		if !cl.killed.Load() {
			out = append(out, cl)
		}
	}
	for _, l := range s.links {
		out = append(out, l.cl)
	}
	s.clientMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// clientList implements CLIENT LIST [TYPE type | ID id [id ...]].
func clientList(x *Ctx) {
	typ := clientTypeNone
	var ids map[int64]bool
	switch {
	case len(x.Args) == 4 && ArgIs(x.Args[2], "type"):
		if typ = parseClientType(x.Args[3]); typ == clientTypeNone {
			x.W.Error("ERR Unknown client type '" + string(x.Args[3]) + "'")
			return
		}
	case len(x.Args) > 3 && ArgIs(x.Args[2], "id"):
		ids = map[int64]bool{}
		for _, a := range x.Args[3:] {
			id, ok := resp.ParseInt(a)
			if !ok || id <= 0 {
				x.W.Error("ERR Invalid client ID")
				return
			}
			ids[id] = true
		}
	case len(x.Args) != 2:
		x.W.Error("ERR syntax error")
		return
	}
	now := time.Now().UnixMilli()
	var b []byte
	for _, cl := range x.S.clientsSnapshot() {
		if typ != clientTypeNone && cl.typ() != typ {
			continue
		}
		if ids != nil && !ids[cl.id] {
			continue
		}
		b = cl.appendInfo(b, now)
		b = append(b, '\n')
	}
	x.W.Verbatim(string(b))
}

// appendInfo appends the CLIENT LIST line of cl (Redis 7.0 fields, in
// order). Only immutable fields and atomics are read: cl may belong to
// another event loop. Buffer sizes slotd does not track per client are 0.
func (cl *client) appendInfo(b []byte, now int64) []byte {
	f := cl.flags.Load()
	name := ""
	if n := cl.name.Load(); n != nil {
		name = *n
	}
	cmd := "NULL"
	if c := cl.lastCmd.Load(); c != nil {
		cmd = *c
	}
	var fl []byte
	if f&clientFlagReplica != 0 {
		fl = append(fl, 'S')
	}
	if f&clientFlagMaster != 0 {
		fl = append(fl, 'M')
	}
	if f&clientFlagPubSub != 0 {
		fl = append(fl, 'P')
	}
	if f&clientFlagMulti != 0 {
		fl = append(fl, 'x')
	}
	if f&clientFlagBlocked != 0 {
		fl = append(fl, 'b')
	}
	if f&clientFlagTracking != 0 {
		fl = append(fl, 't')
	}
	if f&clientFlagReadonly != 0 {
		fl = append(fl, 'r')
	}
	if cl.noEvict.Load() {
		fl = append(fl, 'e')
	}
	if cl.noTouch.Load() {
		fl = append(fl, 'T')
	}
	if len(fl) == 0 {
		fl = append(fl, 'N')
	}
	multi := int64(-1)
	if f&clientFlagMulti != 0 {
		multi = 0
	}
	proto := 2
	if f&clientFlagResp3 != 0 {
		proto = 3
	}
	qbuf := cl.qbufLen.Load()
	num := func(k string, v int64) {
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, v, 10)
	}
	str := func(k, v string) {
		b = append(b, ' ')
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, v...)
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.id, 10)
	str("addr", cl.addr)
	str("laddr", cl.laddr)
	num("fd", int64(cl.fd))
	str("name", name)
	num("age", (now-cl.created)/1000)
	num("idle", (now-cl.lastIO.Load())/1000)
	str("flags", string(fl))
	num("db", int64(cl.db.Load()))
	num("sub", int64(cl.ps.counts[0].Load()))
	num("psub", int64(cl.ps.counts[1].Load()))
	num("ssub", int64(cl.ps.counts[2].Load()))
	num("multi", multi)
	num("qbuf", qbuf)
	num("qbuf-free", 0)
	num("argv-mem", 0)
	num("multi-mem", 0)
	num("rbs", 0)
	num("rbp", 0)
	num("obl", 0)
	num("oll", 0)
	omem := cl.outputMemory()
	num("omem", omem)
	num("tot-mem", qbuf+omem)
	str("events", "r")
	str("cmd", cmd)
	str("user", cl.userName())
	num("redir", cl.trackRedir())
	num("resp", int64(proto))
	return b
}

// clientKill implements both forms of CLIENT KILL: the old
// "CLIENT KILL addr" (+OK or an error) and the filter form (the number of
// clients killed). The calling client is closed after its reply.
func clientKill(x *Ctx) {
	if len(x.Args) == 3 {
		addr := string(x.Args[2])
		for _, cl := range x.S.clientsSnapshot() {
			if cl.addr == addr {
				x.S.kill(x, cl)
				x.W.OK()
				return
			}
		}
		x.W.Error("ERR No such client")
		return
	}
	var (
		id     int64
		typ    = clientTypeNone
		addr   *string
		laddr  *string
		user   *string
		maxAge int64
		skipMe = true
	)
	for i := 2; i < len(x.Args); i += 2 {
		if i+1 >= len(x.Args) {
			x.W.Error("ERR syntax error")
			return
		}
		opt, val := x.Args[i], x.Args[i+1]
		switch {
		case ArgIs(opt, "id"):
			v, ok := resp.ParseInt(val)
			if !ok || v <= 0 {
				x.W.Error("ERR client-id should be greater than 0")
				return
			}
			id = v
		case ArgIs(opt, "type"):
			if typ = parseClientType(val); typ == clientTypeNone {
				x.W.Error("ERR Unknown client type '" + string(val) + "'")
				return
			}
		case ArgIs(opt, "addr"):
			v := string(val)
			addr = &v
		case ArgIs(opt, "laddr"):
			v := string(val)
			laddr = &v
		case ArgIs(opt, "user"):
			if x.S.ACL.Get(string(val)) == nil {
				x.W.Error("ERR No such user '" + string(val) + "'")
				return
			}
			v := string(val)
			user = &v
		case ArgIs(opt, "skipme"):
			switch {
			case ArgIs(val, "yes"):
				skipMe = true
			case ArgIs(val, "no"):
				skipMe = false
			default:
				x.W.Error("ERR syntax error")
				return
			}
		case ArgIs(opt, "maxage"): // Redis 7.4
			v, ok := resp.ParseInt(val)
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			maxAge = v
		default:
			x.W.Error("ERR syntax error")
			return
		}
	}
	now := time.Now().UnixMilli()
	killed := int64(0)
	for _, cl := range x.S.clientsSnapshot() {
		switch {
		case id != 0 && cl.id != id,
			typ != clientTypeNone && cl.typ() != typ,
			addr != nil && cl.addr != *addr,
			laddr != nil && cl.laddr != *laddr,
			user != nil && (cl.user == nil || cl.user.User().Name != *user),
			maxAge > 0 && (now-cl.created)/1000 < maxAge,
			skipMe && cl == x.C:
			continue
		}
		x.S.kill(x, cl)
		killed++
	}
	x.W.Int(killed)
}

// kill closes cl: the caller itself after its reply, others right away
// (gnet's Close is safe from any goroutine).
func (s *Server) kill(x *Ctx, cl *client) {
	if cl == x.C {
		x.C.closing = true
		return
	}
	if cl.conn == nil { // a link slotd opened (masterlink.go)
		s.closeLink(cl)
		return
	}
	// Its buffers stop counting now (clientMemory), and CLIENT LIST no
	// longer shows it, as in Redis, though its loop closes the socket a
	// moment later.
	cl.killed.Store(true)
	_ = cl.conn.Close()
}

// clientHelpText lists CLIENT subcommands in Redis's order; only those
// registered are shown.
var clientHelpText = []struct {
	sub   string
	lines []string
}{
	{"caching", []string{"CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes."}},
	{"getredir", []string{"GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled."}},
	{"getname", []string{"GETNAME", "    Return the name of the current connection."}},
	{"id", []string{"ID", "    Return the ID of the current connection."}},
	{"info", []string{"INFO", "    Return information about the current client connection."}},
	{"kill", []string{"KILL <ip:port>", "    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Kill connections by type.",
		"    * USER <username>", "      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)", "      Skip killing current connection (default: yes).",
		"    * MAXAGE <seconds>", "      Kill connections older than the specified age."}},
	{"list", []string{"LIST [options ...]", "    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Return clients of specified type."}},
	{"unpause", []string{"UNPAUSE", "    Stop the current client pause, resuming traffic."}},
	{"pause", []string{"PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds."}},
	{"reply", []string{"REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection."}},
	{"setname", []string{"SETNAME <name>", "    Assign the name <name> to the current connection."}},
	{"setinfo", []string{"SETINFO <option> <value>", "    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.", "    * LIB-VER: the client lib version."}},
	{"unblock", []string{"UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client."}},
	{"tracking", []string{"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]", "    Control server assisted client side caching."}},
	{"trackinginfo", []string{"TRACKINGINFO", "    Report tracking status for the current connection."}},
	{"no-evict", []string{"NO-EVICT (ON|OFF)", "    Protect current client connection from eviction."}},
	{"no-touch", []string{"NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on."}},
}

func clientHelp(x *Ctx) {
	parent := x.Spec.Parent
	var lines []string
	for _, h := range clientHelpText {
		if parent == nil || parent.Subcommands[h.sub] != nil {
			lines = append(lines, h.lines...)
		}
	}
	WriteHelp(x.W, "CLIENT", lines)
}

// writeHelp writes a Redis-style HELP reply: a header, the lines, and the
// HELP entry, as status strings.
func WriteHelp(w *resp.Writer, cmd string, lines []string) {
	w.Array(len(lines) + 3)
	w.Simple(strings.ToUpper(cmd) + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		w.Simple(l)
	}
	w.Simple("HELP")
	w.Simple("    Prints this help.")
}
