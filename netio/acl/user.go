// Package acl owns Redis 7.0's access control lists: users (passwords kept
// as SHA-256 hex, on/off, nopass), their selectors (command bits by command
// ID and categories, key patterns with read/write flags, channel patterns),
// the rule language of ACL SETUSER and the aclfile, the text ACL LIST and
// GETUSER print back, and the permission check a command goes through. It
// is deterministic: no goroutines, clocks or random sources (callers pass
// time in and draw random passwords themselves).
package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Perm is the access a key pattern grants (%R~, %W~, ~ is both).
type Perm uint8

const (
	PermRead  Perm = 1
	PermWrite Perm = 2
	PermAll        = PermRead | PermWrite
)

// KeyPattern is one key pattern of a selector.
type KeyPattern struct {
	Pattern string
	Perm    Perm
}

// Selector is one set of permissions: a command runs when one of a user's
// selectors allows the command and every key and channel it names.
type Selector struct {
	bits        []uint64 // bit per command ID; the last bit: future commands (+@all)
	allCommands bool     // skip the bit test (+@all with nothing removed since)
	firstArgs   map[int][]string
	allKeys     bool
	keys        []KeyPattern
	allChannels bool
	channels    []string
}

// User is an immutable snapshot of one user: SETUSER builds a new one and
// the registry swaps it in (Handle).
type User struct {
	Name      string
	Enabled   bool
	NoPass    bool
	sanitize  int8 // 0 unset, 1 sanitize-payload, -1 skip-sanitize-payload
	Passwords []string
	Selectors []*Selector // [0] is the root selector

	// Unrestricted: the root selector allows every command, key and
	// channel, so checks can stop at once.
	Unrestricted bool
}

// HashPassword returns the lower-case hex SHA-256 of a clear-text password.
func HashPassword(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

// validHash reports whether h is 64 lower-case hex characters.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// HasSpaces reports whether s has a white-space or NUL byte (not allowed
// in user names and patterns).
func HasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

func newSelector(allChannels bool) *Selector {
	return &Selector{bits: make([]uint64, bitWords()), allChannels: allChannels}
}

func (s *Selector) clone() *Selector {
	c := *s
	c.bits = slices.Clone(s.bits)
	if s.firstArgs != nil {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for k, v := range s.firstArgs {
			c.firstArgs[k] = slices.Clone(v)
		}
	}
	c.keys = slices.Clone(s.keys)
	c.channels = slices.Clone(s.channels)
	return &c
}

// NewUser returns a user as ACL SETUSER creates it: off, no passwords, no
// commands, no keys, and channels per acl-pubsub-default.
func NewUser(name string, allChannels bool) *User {
	return &User{Name: name, Selectors: []*Selector{newSelector(allChannels)}}
}

// DefaultUser returns the default user as Redis creates it: on, nopass,
// every command, key and channel.
func DefaultUser() *User {
	u := NewUser("default", true)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		_ = u.apply([]byte(op), true)
	}
	u.finish()
	return u
}

// Clone returns a deep copy of u (to change with SetUser).
func (u *User) Clone() *User {
	c := *u
	c.Passwords = slices.Clone(u.Passwords)
	c.Selectors = make([]*Selector, len(u.Selectors))
	for i, s := range u.Selectors {
		c.Selectors[i] = s.clone()
	}
	return &c
}

// Renamed returns a copy of u under another name.
func (u *User) Renamed(name string) *User {
	c := u.Clone()
	c.Name = name
	return c
}

// CheckPassword reports whether pass logs in as u (u on, and nopass or one
// of its hashes matching).
func (u *User) CheckPassword(pass []byte) bool {
	if !u.Enabled {
		return false
	}
	if u.NoPass {
		return true
	}
	h := HashPassword(pass)
	ok := false
	for _, p := range u.Passwords {
		if constEq(p, h) {
			ok = true
		}
	}
	return ok
}

func constEq(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var d byte
	for i := 0; i < len(a); i++ {
		d |= a[i] ^ b[i]
	}
	return d == 0
}

// AuthFree reports whether a new connection is logged in as u without AUTH
// (u on and nopass).
func (u *User) AuthFree() bool { return u.Enabled && u.NoPass }

// finish recomputes the cached Unrestricted flag.
func (u *User) finish() {
	r := u.Selectors[0]
	u.Unrestricted = r.allCommands && r.allKeys && r.allChannels
}

// AllChannels reports whether some selector of u allows every channel.
func (u *User) AllChannels() bool {
	for _, s := range u.Selectors {
		if s.allChannels {
			return true
		}
	}
	return false
}

// channelPatterns returns every channel pattern of every selector of u.
func (u *User) channelPatterns() []string {
	var out []string
	for _, s := range u.Selectors {
		out = append(out, s.channels...)
	}
	return out
}

// ChannelsRevoked reports whether next (a new version of prev) lost some
// channel permission prev had: then its pub/sub clients must be checked
// (Redis kills those subscribed to what they may no longer use).
func ChannelsRevoked(next, prev *User) bool {
	if next.AllChannels() {
		return false
	}
	upcoming := next.channelPatterns()
	for _, s := range prev.Selectors {
		if s.allChannels {
			return true
		}
		for _, c := range s.channels {
			if !slices.Contains(upcoming, c) {
				return true
			}
		}
	}
	return false
}

// KeepsSubscription reports whether a client of next subscribed to
// channel (a pattern subscription when pattern) may stay: checked against
// every channel pattern of every selector, as Redis's revocation check.
func KeepsSubscription(next *User, channel string, pattern bool) bool {
	if next.AllChannels() {
		return true
	}
	return channelAllowed(next.channelPatterns(), channel, pattern)
}
