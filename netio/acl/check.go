package acl

import (
	"strings"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// Denied says why a check refused a command; when several selectors
// refuse, the greatest reason wins (Redis's order: command < key < auth <
// channel).
type Denied uint8

const (
	OK Denied = iota
	DeniedCmd
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// Reason is the ACL LOG "reason" field.
func (d Denied) Reason() string {
	switch d {
	case DeniedCmd:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// Message is Redis's description of the refusal (scripts' errors).
func (d Denied) Message() string {
	switch d {
	case DeniedCmd:
		return "can't run this command or subcommand"
	case DeniedKey:
		return "can't access at least one of the keys mentioned in the command arguments"
	case DeniedChannel:
		return "can't publish to the channel mentioned in the command"
	}
	return "lacking the permissions for the command"
}

// accessWrites are the write commands that also read the value of the
// key they name (their key spec has Redis's ACCESS flag): a write-only
// pattern (%W~) does not allow them.
var accessWrites = map[string]bool{
	"incr": true, "decr": true, "incrby": true, "decrby": true, "incrbyfloat": true, "getset": true,
	"getdel": true, "getex": true, "setbit": true, "hincrby": true, "hincrbyfloat": true, "zincrby": true,
	"lpop": true, "rpop": true, "blpop": true, "brpop": true, "lmpop": true, "blmpop": true, "spop": true,
	"zpopmin": true, "zpopmax": true, "bzpopmin": true, "bzpopmax": true, "zmpop": true, "bzmpop": true,
	"move": true, "migrate": true,
}

// noAccess are the read-only commands that do not return a key's value,
// only whether it exists or its size (Redis marks their keys without
// ACCESS): any pattern matching the key allows them, %R~ or %W~.
var noAccess = map[string]bool{
	"exists": true, "touch": true, "type": true, "strlen": true, "llen": true, "scard": true, "zcard": true,
	"hlen": true, "xlen": true, "hexists": true, "hstrlen": true, "sismember": true, "memory|usage": true, "watch": true,
	"object|encoding": true, "object|freq": true, "object|idletime": true, "object|refcount": true,
}

// storeFirst are the commands whose first key is a destination written
// from the others, which are only read.
var storeFirst = map[string]bool{
	"sinterstore": true, "sunionstore": true, "sdiffstore": true, "zunionstore": true, "zinterstore": true,
	"zdiffstore": true, "zrangestore": true, "geosearchstore": true,
}

// KeyNeed is the access command spec needs to the j-th of its keys
// (argument position pos): read for read-only commands, write for writes,
// both for writes that also return the key's value, and per key for
// commands that read some keys and write others.
func KeyNeed(spec *command.Spec, args [][]byte, j, pos int) Perm {
	name := spec.Name
	switch {
	case name == "copy" || name == "lmove" || name == "blmove" || name == "rpoplpush" || name == "brpoplpush" ||
		name == "rename" || name == "renamenx" || name == "smove":
		if j == 0 {
			if name == "copy" {
				return PermRead
			}
			return PermAll
		}
		return PermWrite
	case storeFirst[name] || name == "bitop":
		if j == 0 {
			return PermWrite
		}
		return PermRead
	case name == "pfmerge":
		if j == 0 {
			return PermAll
		}
		return PermRead
	case name == "sort" || name == "georadius" || name == "georadiusbymember":
		if j == 0 {
			return PermRead
		}
		return PermWrite
	case name == "set":
		for _, a := range args[3:] {
			if strings.EqualFold(string(a), "get") {
				return PermAll
			}
		}
		return PermWrite
	case name == "bitfield":
		need := PermRead
		for _, a := range args[2:] {
			switch strings.ToLower(string(a)) {
			case "get":
				need |= PermRead
			case "set", "incrby":
				need |= PermWrite
			}
		}
		return need
	case name == "eval" || name == "evalsha" || name == "fcall":
		return PermAll
	case noAccess[name]:
		return 0
	case name == "pfdebug" || name == "xreadgroup":
		return PermRead
	case accessWrites[name]:
		return PermAll
	case spec.Write():
		return PermWrite
	}
	return PermRead
}

// channelArgs returns the argument positions of the channels a command
// publishes to or subscribes to (unsubscribing is never refused), and
// whether they are patterns.
func channelArgs(spec *command.Spec, n int) (from, to int, pattern bool) {
	switch spec.Name {
	case "publish", "spublish":
		return 1, 2, false
	case "subscribe", "ssubscribe":
		return 1, n, false
	case "psubscribe":
		return 1, n, true
	}
	return 0, 0, false
}

// hasKeys reports whether spec's key positions are keys (shard channels
// route like keys but are channels).
func hasKeys(spec *command.Spec) bool {
	return (spec.First > 0 || spec.Keys != nil) && spec.Group != "pubsub"
}

func (s *Selector) keyAllowed(key []byte, need Perm) bool {
	if s.allKeys {
		return true
	}
	for _, p := range s.keys {
		if p.Perm&need == need && slots.Match([]byte(p.Pattern), key, false) {
			return true
		}
	}
	return false
}

func channelAllowed(list []string, ch string, pattern bool) bool {
	for _, p := range list {
		if (pattern && p == ch) || (!pattern && slots.MatchString(p, ch, false)) {
			return true
		}
	}
	return false
}

// checkSelector checks one selector; keys are the command's key
// positions (computed once for all selectors).
func (s *Selector) check(spec *command.Spec, args [][]byte, keys []int) (Denied, int) {
	if !s.allCommands && !spec.NoAuth() && !s.bit(spec.ID) {
		first := s.firstArgs[spec.ID]
		i := 1
		if spec.Parent != nil {
			i = 2
		}
		ok := false
		if len(args) > i {
			for _, a := range first {
				ok = ok || strings.EqualFold(a, string(args[i]))
			}
		}
		if !ok {
			return DeniedCmd, 0
		}
	}
	if !s.allKeys {
		for j, pos := range keys {
			if !s.keyAllowed(args[pos], KeyNeed(spec, args, j, pos)) {
				return DeniedKey, pos
			}
		}
	}
	if !s.allChannels {
		from, to, pattern := channelArgs(spec, len(args))
		for i := from; i < to && i < len(args); i++ {
			if !channelAllowed(s.channels, string(args[i]), pattern) {
				return DeniedChannel, i
			}
		}
	}
	return OK, 0
}

// Check decides whether u may run spec with args (args[0] is the command
// name, subcommands at args[1]). On refusal it returns the reason and the
// argument position of the key or channel refused (for ACL LOG): the
// position of the last selector's refusal of the greatest reason.
func Check(u *User, spec *command.Spec, args [][]byte) (Denied, int) {
	var keys []int
	if hasKeys(spec) {
		keys, _ = spec.KeyIndexes(nil, args)
	}
	worst, at := DeniedCmd, 0
	for _, s := range u.Selectors {
		d, pos := s.check(spec, args, keys)
		if d == OK {
			return OK, 0
		}
		if d > worst || (d == worst && pos > at) {
			worst, at = d, pos
		}
	}
	return worst, at
}

// FullKeyAccess reports whether some selector of u allows the command
// and grants need to every key (SORT's BY and GET patterns may read any
// key only then).
func FullKeyAccess(u *User, spec *command.Spec, args [][]byte, need Perm) bool {
	if u.Unrestricted {
		return true
	}
	var keys []int
	if hasKeys(spec) {
		keys, _ = spec.KeyIndexes(nil, args)
	}
	for _, s := range u.Selectors {
		if d, _ := s.check(spec, args, keys); d != OK {
			continue
		}
		if s.allKeys {
			return true
		}
		for _, p := range s.keys {
			if p.Perm&need == need && p.Pattern == "*" {
				return true
			}
		}
	}
	return false
}

// CheckKey reports whether some selector of u allows key with access need
// (a key a script or SORT reaches at run time).
func CheckKey(u *User, key []byte, need Perm) bool {
	for _, s := range u.Selectors {
		if s.keyAllowed(key, need) {
			return true
		}
	}
	return false
}

// CheckChannel reports whether some selector of u allows the channel (a
// pattern subscription when pattern).
func CheckChannel(u *User, ch string, pattern bool) bool {
	for _, s := range u.Selectors {
		if s.allChannels || channelAllowed(s.channels, ch, pattern) {
			return true
		}
	}
	return false
}
