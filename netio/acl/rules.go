package acl

import (
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/slotd/slotd/netio/command"
)

// cmdTable is the command table as the ACL sees it, built once on first
// use (after every package registered its commands at init).
type cmdTable struct {
	n     int             // command.Count(): the future-commands bit
	specs []*command.Spec // commands and subcommands, each command before its subcommands
	cats  []uint32        // category bits by spec ID
}

var (
	tableOnce sync.Once
	table     *cmdTable
)

func tbl() *cmdTable {
	tableOnce.Do(func() {
		t := &cmdTable{n: command.Count()}
		t.cats = make([]uint32, t.n)
		var add func(s *command.Spec)
		add = func(s *command.Spec) {
			t.specs = append(t.specs, s)
			for _, c := range s.CategoryNames() {
				if i := command.CategoryIndex(c); i >= 0 {
					t.cats[s.ID] |= 1 << i
				}
			}
			subs := make([]*command.Spec, 0, len(s.Subcommands))
			for _, sub := range s.Subcommands {
				subs = append(subs, sub)
			}
			sort.Slice(subs, func(i, j int) bool { return subs[i].Name < subs[j].Name })
			for _, sub := range subs {
				add(sub)
			}
		}
		for _, s := range command.All() {
			add(s)
		}
		table = t
	})
	return table
}

func bitWords() int { return tbl().n/64 + 1 }

// InCategory reports whether s belongs to the category with index c.
func InCategory(s *command.Spec, c int) bool { return tbl().cats[s.ID]&(1<<c) != 0 }

// CategoryCommands returns the full names of the commands and subcommands
// in category c (ACL CAT <category>).
func CategoryCommands(c int) []string {
	t := tbl()
	var out []string
	for _, s := range t.specs {
		if t.cats[s.ID]&(1<<c) != 0 {
			out = append(out, s.Name)
		}
	}
	return out
}

func (s *Selector) bit(id int) bool { return s.bits[id/64]&(1<<(id%64)) != 0 }

func (s *Selector) setBit(id int, v bool) {
	if v {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// future reports whether the selector may run commands added later
// (+@all was applied and not taken back by -@all).
func (s *Selector) future() bool { return s.bit(tbl().n) }

// changeCommand allows or blocks a command and its subcommands.
func (s *Selector) changeCommand(c *command.Spec, allow bool) {
	s.setBit(c.ID, allow)
	delete(s.firstArgs, c.ID)
	for _, sub := range c.Subcommands {
		s.setBit(sub.ID, allow)
	}
}

func (s *Selector) changeCategory(c int, allow bool) {
	t := tbl()
	for _, sp := range t.specs {
		if t.cats[sp.ID]&(1<<c) != 0 {
			s.changeCommand(sp, allow)
		}
	}
}

// lookupFull finds "cmd" or "cmd|sub" in the command table.
func lookupFull(name string) *command.Spec {
	parent, sub, hasSub := strings.Cut(name, "|")
	c := command.Lookup([]byte(parent))
	if c == nil || !hasSub {
		return c
	}
	if strings.Contains(sub, "|") {
		return nil
	}
	return c.Sub([]byte(sub))
}

// Errors of a single rule (Redis's ACLSetUserStringError texts).
var (
	errUnknownCmd  = errors.New("Unknown command or category name in ACL")
	errSyntax      = errors.New("Syntax error")
	errKeyAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errChanAfter   = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errNoSuchPass  = errors.New("The password you are trying to remove from the user does not exist")
	errBadHash     = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errSubFirstArg = errors.New("Allowing first-arg of a subcommand is not supported")
	// ErrDuplicate is a user defined twice in the config or aclfile.
	ErrDuplicate = errors.New("Duplicate user found. A user can only be defined once in config files")
)

// applySelector applies one selector rule.
func (s *Selector) apply(op string, pubsubAll bool) error {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys, s.keys = true, nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels, s.channels = true, nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels, s.channels = false, nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		for i := range s.bits {
			s.bits[i] = ^uint64(0)
		}
		s.allCommands, s.firstArgs = true, nil
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		for i := range s.bits {
			s.bits[i] = 0
		}
		s.allCommands, s.firstArgs = false, nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errKeyAfterAll
		}
		perm, off := PermAll, 1
		if op[0] == '%' {
			perm = 0
			for ; off < len(op); off++ {
				c := op[off]
				if (c == 'R' || c == 'r') && perm&PermRead == 0 {
					perm |= PermRead
				} else if (c == 'W' || c == 'w') && perm&PermWrite == 0 {
					perm |= PermWrite
				} else if c == '~' {
					off++
					break
				} else {
					return errSyntax
				}
			}
		}
		pat := op[min(off, len(op)):]
		if HasSpaces(pat) {
			return errSyntax
		}
		found := false
		for i := range s.keys {
			if s.keys[i].Pattern == pat {
				s.keys[i].Perm |= perm
				found = true
			}
		}
		if !found {
			s.keys = append(s.keys, KeyPattern{Pattern: pat, Perm: perm})
		}
		s.allKeys = false
	case op[0] == '&':
		if s.allChannels {
			return errChanAfter
		}
		pat := op[1:]
		if HasSpaces(pat) {
			return errSyntax
		}
		found := false
		for _, c := range s.channels {
			found = found || c == pat
		}
		if !found {
			s.channels = append(s.channels, pat)
		}
	case len(op) >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@':
		c := command.CategoryIndex(op[2:])
		if c < 0 {
			return errUnknownCmd
		}
		s.changeCategory(c, op[0] == '+')
	case op[0] == '+':
		name := strings.ToLower(op[1:])
		i := strings.LastIndexByte(name, '|')
		if i < 0 {
			c := lookupFull(name)
			if c == nil {
				return errUnknownCmd
			}
			s.changeCommand(c, true)
			return nil
		}
		parent := lookupFull(name[:i])
		if parent == nil {
			return errUnknownCmd
		}
		if parent.Parent != nil {
			return errSubFirstArg
		}
		first := name[i+1:]
		if first == "" {
			return errSyntax
		}
		if parent.Subcommands != nil {
			c := lookupFull(name)
			if c == nil {
				return errUnknownCmd
			}
			s.changeCommand(c, true)
			return nil
		}
		// A first argument of a command without subcommands (SELECT|0).
		if s.firstArgs == nil {
			s.firstArgs = map[int][]string{}
		}
		for _, a := range s.firstArgs[parent.ID] {
			if strings.EqualFold(a, first) {
				return nil
			}
		}
		s.firstArgs[parent.ID] = append(s.firstArgs[parent.ID], first)
	case op[0] == '-':
		c := lookupFull(strings.ToLower(op[1:]))
		if c == nil {
			return errUnknownCmd
		}
		s.changeCommand(c, false)
	default:
		return errSyntax
	}
	return nil
}

// apply applies one user rule (flags, passwords, selectors, or a rule of
// the root selector).
func (u *User) apply(opb []byte, pubsubAll bool) error {
	op := string(opb)
	if op == "" {
		return nil
	}
	switch {
	case strings.EqualFold(op, "on"):
		u.Enabled = true
	case strings.EqualFold(op, "off"):
		u.Enabled = false
	case strings.EqualFold(op, "skip-sanitize-payload"):
		u.sanitize = -1
	case strings.EqualFold(op, "sanitize-payload"):
		u.sanitize = 1
	case strings.EqualFold(op, "nopass"):
		u.NoPass, u.Passwords = true, nil
	case strings.EqualFold(op, "resetpass"):
		u.NoPass, u.Passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		var h string
		if op[0] == '>' {
			h = HashPassword(opb[1:])
		} else {
			h = op[1:]
			if !validHash(h) {
				return errBadHash
			}
		}
		found := false
		for _, p := range u.Passwords {
			found = found || p == h
		}
		if !found {
			u.Passwords = append(u.Passwords, h)
		}
		u.NoPass = false
	case op[0] == '<' || op[0] == '!':
		var h string
		if op[0] == '<' {
			h = HashPassword(opb[1:])
		} else {
			h = op[1:]
			if !validHash(h) {
				return errBadHash
			}
		}
		i := -1
		for j, p := range u.Passwords {
			if p == h {
				i = j
			}
		}
		if i < 0 {
			return errNoSuchPass
		}
		u.Passwords = append(u.Passwords[:i:i], u.Passwords[i+1:]...)
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(pubsubAll)
		words, ok := splitArgs(op[1 : len(op)-1])
		if !ok {
			return errSyntax
		}
		for _, w := range words {
			if err := s.apply(w, pubsubAll); err != nil {
				return err
			}
		}
		u.Selectors = append(u.Selectors, s)
	case strings.EqualFold(op, "clearselectors"):
		u.Selectors = u.Selectors[:1]
	case strings.EqualFold(op, "reset"):
		u.NoPass, u.Passwords = false, nil
		r := u.Selectors[0]
		r.allKeys, r.keys = false, nil
		r.allChannels, r.channels = pubsubAll, nil
		u.Enabled = false
		u.sanitize = 1
		u.Selectors = u.Selectors[:1]
		_ = r.apply("-@all", pubsubAll)
	default:
		return u.Selectors[0].apply(op, pubsubAll)
	}
	return nil
}

// splitArgs splits a selector's inside on white space (the rules inside
// parentheses are plain words; quoting is not needed for ACL rules).
func splitArgs(s string) ([]string, bool) {
	return strings.Fields(s), true
}

// mergeSelectors joins rules of a selector spread over several arguments
// ("(~key1", "+get)"), as Redis does; on an unmatched "(" it returns the
// index of the argument that opened it.
func mergeSelectors(ops [][]byte) ([][]byte, int) {
	var out [][]byte
	var cur []byte
	open := -1
	for j, op := range ops {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			cur = append([]byte(nil), op...)
			open = j
			continue
		}
		if open >= 0 {
			cur = append(append(cur, ' '), op...)
			if len(op) > 0 && op[len(op)-1] == ')' {
				out = append(out, cur)
				cur, open = nil, -1
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, open
	}
	return out, -1
}

// SetUser applies ops to a copy of u (nil: a new user named name) and
// returns it, or Redis's error text naming the first rule that failed (u
// is then unchanged). pubsubAll is acl-pubsub-default allchannels.
func SetUser(u *User, name string, ops [][]byte, pubsubAll bool) (*User, string) {
	merged, bad := mergeSelectors(ops)
	if bad >= 0 {
		return nil, "Unmatched parenthesis in acl selector starting at '" + string(ops[bad]) + "'."
	}
	var nu *User
	if u != nil {
		nu = u.Clone()
	} else {
		nu = NewUser(name, pubsubAll)
	}
	for _, op := range merged {
		if err := nu.apply(op, pubsubAll); err != nil {
			return nil, "Error in ACL SETUSER modifier '" + string(op) + "': " + err.Error()
		}
	}
	nu.finish()
	return nu, ""
}
