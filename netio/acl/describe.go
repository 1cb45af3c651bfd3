package acl

import (
	"slices"
	"strings"

	"github.com/slotd/slotd/netio/command"
)

// countCategory counts the commands of category c the selector allows (on)
// and blocks (off).
func (s *Selector) countCategory(c int) (on, off int) {
	t := tbl()
	for _, sp := range t.specs {
		if t.cats[sp.ID]&(1<<c) == 0 {
			continue
		}
		if s.bit(sp.ID) {
			on++
		} else {
			off++
		}
	}
	return on, off
}

// CommandRules returns the rules that rebuild the selector's command bits,
// starting with +@all or -@all, then the categories that fit best, then
// single commands, as Redis's ACL GETUSER and ACL LIST print them.
func (s *Selector) CommandRules() string {
	var b strings.Builder
	fake := newSelector(false)
	additive := !s.future()
	if additive {
		b.WriteString("-@all ")
		_ = fake.apply("-@all", false)
	} else {
		b.WriteString("+@all ")
		_ = fake.apply("+@all", false)
	}
	temp := newSelector(false)
	copy(temp.bits, s.bits)
	applied := make([]bool, len(command.ACLCategories))
	for {
		best, minDiff, maxSame := -1, int(^uint(0)>>1), 0
		for j := range command.ACLCategories {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < minDiff || (diff == minDiff && same > maxSame)) {
				best, minDiff, maxSame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		fake.changeCategory(best, additive)
		temp.changeCategory(best, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(command.ACLCategories[best])
		b.WriteByte(' ')
		applied[best] = true
	}
	for _, sp := range tbl().specs {
		user, have := s.bit(sp.ID), fake.bit(sp.ID)
		if user != have {
			if user {
				b.WriteByte('+')
			} else {
				b.WriteByte('-')
			}
			b.WriteString(sp.Name)
			b.WriteByte(' ')
			fake.changeCommand(sp, user)
		}
		if !user {
			for _, a := range s.firstArgs[sp.ID] {
				b.WriteString("+" + sp.Name + "|" + a + " ")
			}
		}
	}
	out := b.String()
	return out[:len(out)-1]
}

func (p KeyPattern) String() string {
	switch p.Perm {
	case PermRead:
		return "%R~" + p.Pattern
	case PermWrite:
		return "%W~" + p.Pattern
	}
	return "~" + p.Pattern
}

// KeysText is the "keys" field of ACL GETUSER.
func (s *Selector) KeysText() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

// ChannelsText is the "channels" field of ACL GETUSER.
func (s *Selector) ChannelsText() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// describe is the selector in ACL LIST form: keys, channels, commands.
func (s *Selector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.CommandRules())
	return b.String()
}

// Flags are the user flags ACL GETUSER lists, in Redis's order.
func (u *User) Flags() []string {
	var out []string
	if u.Enabled {
		out = append(out, "on")
	} else {
		out = append(out, "off")
	}
	if u.NoPass {
		out = append(out, "nopass")
	}
	switch u.sanitize {
	case -1:
		out = append(out, "skip-sanitize-payload")
	case 1:
		out = append(out, "sanitize-payload")
	}
	return out
}

// Describe returns the user's rules as ACL LIST prints them after
// "user <name> ": flags, password hashes, the root selector, then the
// other selectors in parentheses.
func (u *User) Describe() string {
	var b strings.Builder
	for _, f := range u.Flags() {
		b.WriteString(f + " ")
	}
	for _, p := range u.Passwords {
		b.WriteString("#" + p + " ")
	}
	for i, s := range u.Selectors {
		if i == 0 {
			b.WriteString(s.describe())
		} else {
			b.WriteString(" (" + s.describe() + ")")
		}
	}
	return b.String()
}

// Line is the user as an aclfile / ACL LIST line.
func (u *User) Line() string { return "user " + u.Name + " " + u.Describe() }

// SortedNames returns the names of users in byte order (ACL USERS).
func SortedNames(users map[string]*User) []string {
	names := make([]string, 0, len(users))
	for n := range users {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
