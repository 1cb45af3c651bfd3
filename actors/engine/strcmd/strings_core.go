package strcmd

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

// String commands: GET, SET and its variants (SETNX, SETEX, PSETEX, GETSET,
// GETDEL, GETEX). Values are kept as bytes in Entry.Str; integers are their
// decimal text.

func registerStringsCore() {
	// SET, SETEX and PSETEX are O(1) but not flagged fast (they take
	// options): RunTimed lets a shard time a pipeline of them as a run.
	runTimed := func(s *command.Spec) *command.Spec { s.RunTimed = true; return s }
	command.Register(
		strSpec("get", 2, "Get the value of a key", "1.0.0", cmdGet, "readonly", "fast"),
		runTimed(strSpec("set", -3, "Set the string value of a key", "1.0.0", cmdSet, "write", "denyoom")),
		strSpec("setnx", 3, "Set the value of a key, only if the key does not exist", "1.0.0", cmdSetNX,
			"write", "denyoom", "fast"),
		runTimed(strSpec("setex", 4, "Set the value and expiration of a key", "2.0.0", cmdSetEX, "write", "denyoom")),
		runTimed(strSpec("psetex", 4, "Set the value and expiration in milliseconds of a key", "2.6.0", cmdPSetEX,
			"write", "denyoom")),
		strSpec("getset", 3, "Set the string value of a key and return its old value", "1.0.0", cmdGetSet,
			"write", "denyoom", "fast"),
		strSpec("getdel", 2, "Get the value of a key and delete the key", "6.2.0", cmdGetDel, "write", "fast"),
		strSpec("getex", -2, "Get the value of a key and optionally set its expiration", "6.2.0", cmdGetEx,
			"write", "fast"),
	)
}

// strSpec builds the spec of a single-key string command. ACL categories
// follow from the flags as Redis derives them.
func strSpec(name string, arity int, summary, since string, h engine.Handler, flags ...string) *command.Spec {
	s := engine.Handle(&command.Spec{Name: name, Arity: arity, Flags: flags, First: 1, Last: 1, Step: 1,
		Group: "string", Since: since, Summary: summary, Exec: command.Shard}, h)
	s.Categories = stringCategories(flags)
	return s
}

func stringCategories(flags []string) []string {
	var cats []string
	fast := false
	for _, f := range flags {
		switch f {
		case "write":
			cats = append(cats, "write")
		case "readonly":
			cats = append(cats, "read")
		case "fast":
			fast = true
		}
	}
	cats = append(cats, "string")
	if fast {
		return append(cats, "fast")
	}
	return append(cats, "slow")
}

// replyString writes the GET-style reply for key: nil when missing, the
// value, or WRONGTYPE (reported by the false result). It counts a keyspace
// hit or miss as Redis's lookupKeyRead does.
func replyString(c *engine.Call, key []byte) (*keyspace.Entry, bool) {
	e := c.Lookup(key)
	if e == nil {
		c.W.Null()
		return nil, true
	}
	if e.Kind != keyspace.KindString {
		c.W.Error(engine.ErrWrongType)
		return e, false
	}
	c.W.Bulk(e.Str)
	return e, true
}

func cmdGet(c *engine.Call) { replyString(c, c.Args[1]) }

// Option flags of SET and GETEX.
const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setPersist
	setEX
	setPX
	setEXAT
	setPXAT

	setAnyExpire = setEX | setPX | setEXAT | setPXAT
)

// parseStringOpts parses the options of SET (from argument 3) or GETEX (from
// argument 2) with Redis's rules: each expire form excludes the others (but
// may repeat), NX excludes XX, KEEPTTL and PERSIST exclude any expire. It
// returns the flags and the index of the expire argument (0 if none), or
// false after writing the syntax error.
func parseStringOpts(c *engine.Call, first int, isSet bool) (flags, expIdx int, ok bool) {
	args := c.Args
	for j := first; j < len(args); j++ {
		opt := engine.Cstr(args[j])
		hasNext := j+1 < len(args)
		switch {
		case isSet && engine.EqFold(opt, "nx") && flags&setXX == 0:
			flags |= setNX
		case isSet && engine.EqFold(opt, "xx") && flags&setNX == 0:
			flags |= setXX
		case isSet && engine.EqFold(opt, "get"):
			flags |= setGet
		case isSet && engine.EqFold(opt, "keepttl") && flags&(setPersist|setAnyExpire) == 0:
			flags |= setKeepTTL
		case !isSet && engine.EqFold(opt, "persist") && flags&(setKeepTTL|setAnyExpire) == 0:
			flags |= setPersist
		case engine.EqFold(opt, "ex") && hasNext && flags&(setKeepTTL|setPersist|setAnyExpire&^setEX) == 0:
			flags |= setEX
			expIdx = j + 1
			j++
		case engine.EqFold(opt, "px") && hasNext && flags&(setKeepTTL|setPersist|setAnyExpire&^setPX) == 0:
			flags |= setPX
			expIdx = j + 1
			j++
		case engine.EqFold(opt, "exat") && hasNext && flags&(setKeepTTL|setPersist|setAnyExpire&^setEXAT) == 0:
			flags |= setEXAT
			expIdx = j + 1
			j++
		case engine.EqFold(opt, "pxat") && hasNext && flags&(setKeepTTL|setPersist|setAnyExpire&^setPXAT) == 0:
			flags |= setPXAT
			expIdx = j + 1
			j++
		default:
			c.W.Error(engine.ErrSyntax)
			return 0, 0, false
		}
	}
	return flags, expIdx, true
}

// expireAt converts an expire argument to an absolute unix-ms time the way
// Redis does, writing "invalid expire time in '<cmd>' command" for
// non-positive values and overflow. Relative forms (EX, PX) are added to the
// batch clock; the addition may wrap, which Redis detects as a non-positive
// result too.
func expireAt(c *engine.Call, arg []byte, flags int, cmd string) (int64, bool) {
	n, ok := engine.ParseInt(arg)
	if !ok {
		c.W.Error(engine.ErrNotInt)
		return 0, false
	}
	seconds := flags&(setEX|setEXAT) != 0
	if n <= 0 || (seconds && n > engine.MaxInt64/1000) {
		c.W.Error("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	if seconds {
		n *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		n += c.Now
	}
	if n <= 0 {
		c.W.Error("ERR invalid expire time in '" + cmd + "' command")
		return 0, false
	}
	return n, true
}

// cmdSet implements SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT t|KEEPTTL].
func cmdSet(c *engine.Call) {
	flags, expIdx, ok := parseStringOpts(c, 3, true)
	if !ok {
		return
	}
	setGeneric(c, flags, expIdx, c.Args[2], "set", replyOK, replyNull)
}

// Replies of setGeneric on success and when NX/XX stopped it.
const (
	replyOK = iota
	replyNull
	replyOne
	replyZero
)

// setGeneric is the common part of SET, SETNX, SETEX and PSETEX.
func setGeneric(c *engine.Call, flags, expIdx int, val []byte, cmd string, okReply, abortReply int) {
	var at int64
	if expIdx > 0 {
		var ok bool
		if at, ok = expireAt(c, c.Args[expIdx], flags, cmd); !ok {
			return
		}
	}
	key := c.Args[1]
	if flags&setGet != 0 {
		if _, ok := replyString(c, key); !ok {
			return
		}
	}
	e := c.LookupWrite(key)
	if (flags&setNX != 0 && e != nil) || (flags&setXX != 0 && e == nil) {
		c.Unchanged()
		if flags&setGet == 0 {
			writeFixed(c, abortReply)
		}
		return
	}
	e = setString(c, key, e, val, flags&setKeepTTL != 0)
	c.Notify(engine.NotifyString, "set", key)
	if expIdx > 0 {
		c.SetExpire(e, at)
		c.Notify(engine.NotifyGeneric, "expire", key)
	}
	propagateSet(c, key, val, at, flags&setKeepTTL != 0)
	if flags&setGet == 0 {
		writeFixed(c, okReply)
	}
}

func writeFixed(c *engine.Call, r int) {
	switch r {
	case replyOK:
		c.W.OK()
	case replyNull:
		c.W.Null()
	case replyOne:
		c.W.Int(1)
	default:
		c.W.Int(0)
	}
}

func cmdSetNX(c *engine.Call) { setGeneric(c, setNX, 0, c.Args[2], "setnx", replyOne, replyZero) }

// cmdSetEX implements SETEX key seconds value.
func cmdSetEX(c *engine.Call) { setGeneric(c, setEX, 2, c.Args[3], "setex", replyOK, replyNull) }

// cmdPSetEX implements PSETEX key milliseconds value.
func cmdPSetEX(c *engine.Call) { setGeneric(c, setPX, 2, c.Args[3], "psetex", replyOK, replyNull) }

// cmdGetSet replies with the old value and sets the new one, dropping the TTL.
func cmdGetSet(c *engine.Call) {
	key := c.Args[1]
	e, ok := replyString(c, key)
	if !ok {
		return
	}
	setString(c, key, e, c.Args[2], false)
	c.Notify(engine.NotifyString, "set", key)
}

func cmdGetDel(c *engine.Call) {
	key := c.Args[1]
	e, ok := replyString(c, key)
	if ok && e != nil {
		c.Delete(key)
		c.Notify(engine.NotifyGeneric, "del", key)
	} else {
		c.Unchanged()
	}
}

// cmdGetEx implements GETEX key [EX|PX|EXAT|PXAT t|PERSIST]. As in Redis the
// expire value is only checked once the key is known to be a string, and an
// absolute time already in the past deletes the key after replying.
func cmdGetEx(c *engine.Call) {
	flags, expIdx, ok := parseStringOpts(c, 2, false)
	if !ok {
		return
	}
	key := c.Args[1]
	e := c.Lookup(key)
	if e == nil {
		c.Unchanged()
		c.W.Null()
		return
	}
	if e.Kind != keyspace.KindString {
		c.W.Error(engine.ErrWrongType)
		return
	}
	var at int64
	if expIdx > 0 {
		if at, ok = expireAt(c, c.Args[expIdx], flags, "getex"); !ok {
			return
		}
	}
	c.W.Bulk(e.Str)
	switch {
	case flags&(setEXAT|setPXAT) != 0 && at <= c.Now:
		c.Delete(key)
		if c.Replicating() {
			c.Propagate(engine.CmdDEL, key)
		}
		c.Notify(engine.NotifyGeneric, "del", key)
	case expIdx > 0:
		c.SetExpire(e, at)
		if c.Replicating() {
			c.Propagate(engine.CmdPEXPIREAT, key, strconv.AppendInt(nil, at, 10))
		}
		c.Notify(engine.NotifyGeneric, "expire", key)
	case flags&setPersist != 0 && e.Expire != 0:
		c.SetExpire(e, 0)
		if c.Replicating() {
			c.Propagate(engine.CmdPERSIST, key)
		}
		c.Notify(engine.NotifyGeneric, "persist", key)
	default:
		c.Unchanged()
	}
}

// propagateSet streams a successful SET-family write as "SET key value",
// with the expiry as an absolute PXAT (so replicas do not depend on when
// they apply it) or KEEPTTL.
func propagateSet(c *engine.Call, key, val []byte, at int64, keepTTL bool) {
	if !c.Replicating() {
		return
	}
	switch {
	case at > 0:
		c.Propagate(engine.CmdSET, key, val, engine.ArgPXAT, strconv.AppendInt(nil, at, 10))
	case keepTTL:
		c.Propagate(engine.CmdSET, key, val, engine.ArgKEEPTTL)
	case len(c.Args) == 3 && c.Cmd != nil && c.Cmd.Spec.Name == "set":
		// Plain SET key value: streamed as sent (the default), no copy.
	default:
		c.Propagate(engine.CmdSET, key, val)
	}
}

// setString stores val under key (e is its current live entry or nil),
// replacing any previous value and type and, unless keepTTL, the TTL. The
// value is copied: arguments live in a reused batch buffer.
func setString(c *engine.Call, key []byte, e *keyspace.Entry, val []byte, keepTTL bool) *keyspace.Entry {
	if e == nil {
		return c.CreateString(key, val)
	}
	// Reuse the old buffer only when it is not much bigger than needed, so a
	// key that once held a huge value does not pin that memory.
	if e.Kind == keyspace.KindString && cap(e.Str) >= len(val) && cap(e.Str) <= 2*len(val)+16 {
		e.Str = append(e.Str[:0], val...)
	} else {
		e.Str = append(make([]byte, 0, len(val)), val...)
	}
	e.Kind = keyspace.KindString
	e.Obj = nil
	if !keepTTL && e.Expire != 0 {
		c.SetExpire(e, 0)
	}
	return e
}

// maxStringLen is proto-max-bulk-len, the largest string SETRANGE and APPEND
// may build (Redis's checkStringLength) and the LCS scratch limit.
func maxStringLen(c *engine.Call) int64 {
	if n := c.S.Group().MaxBulkLen.Load(); n > 0 {
		return n
	}
	return 512 << 20
}
